import { describe, expect, it } from "vitest";
import { planTailscaled, TAILSCALED_INSTALL_HINT } from "./tailscaled.js";

const binary = "/usr/sbin/tailscaled";

describe("planTailscaled", () => {
  it("runs userspace networking with state under STARAGENT_HOME where there is no TUN device or no systemd", () => {
    for (const host of [
      { binary, tunDevice: false, systemd: true },
      { binary, tunDevice: true, systemd: false },
      { binary, tunDevice: false, systemd: false },
    ]) {
      const plan = planTailscaled(host, "/home/u/.staragent", [], false);
      expect(plan).toEqual({
        ok: true,
        stateDir: "/home/u/.staragent/tailscale",
        socket: "/home/u/.staragent/tailscale/tailscaled.sock",
        argv: [
          binary,
          "--tun=userspace-networking",
          "--statedir=/home/u/.staragent/tailscale",
          "--state=/home/u/.staragent/tailscale/tailscaled.state",
          "--socket=/home/u/.staragent/tailscale/tailscaled.sock",
          "--socks5-server=localhost:1055",
          "--outbound-http-proxy-listen=localhost:1055",
        ],
      });
    }
  });

  it("leaves a machine with TUN and systemd to Tailscale's own service, unless asked for userspace", () => {
    const host = { binary, tunDevice: true, systemd: true };
    const refused = planTailscaled(host, "/h", [], false);
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining("systemctl enable --now tailscaled") });
    expect(planTailscaled(host, "/h", ["--port=41641"], true)).toMatchObject({
      ok: true,
      argv: expect.arrayContaining(["--tun=userspace-networking", "--port=41641"]),
    });
  });

  it("says how to install it when it is not on the PATH", () => {
    expect(planTailscaled({ binary: undefined, tunDevice: false, systemd: false }, "/h", [], true)).toEqual({
      ok: false,
      message: TAILSCALED_INSTALL_HINT,
    });
  });
});
