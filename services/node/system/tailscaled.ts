import { access, constants } from "node:fs/promises";
import { delimiter, join } from "node:path";

/**
 * Where tailscaled's SOCKS5 and HTTP proxy listen in userspace mode (Tailscale's own documented
 * port): with userspace networking, this machine reaches other tailnet machines only through it.
 * A Node needs none (it only accepts connections); a Hub in userspace mode would.
 */
export const TAILSCALED_PROXY_ADDRESS = "localhost:1055";

/** The folder under `$STARAGENT_HOME` holding tailscaled's state and socket in userspace mode. */
export const TAILSCALE_DIR = "tailscale";

/** How to install Tailscale, for the message when tailscaled is missing. */
export const TAILSCALED_INSTALL_HINT = [
  "tailscaled is not installed (it is not on the PATH). Install Tailscale, then run this again:",
  "  Debian/Ubuntu: add Tailscale's apt repository and install the package, as",
  "  https://tailscale.com/download/linux says ('curl -fsSL https://tailscale.com/install.sh | sh' does both);",
  "  elsewhere, or without root: the static build from https://pkgs.tailscale.com/stable/#static,",
  "  with tailscaled and tailscale on the PATH.",
].join("\n");

/** What this machine offers tailscaled, and where tailscaled is. */
export interface TailscaledHost {
  /** Absolute path of tailscaled, when it is on the PATH. */
  readonly binary: string | undefined;
  /** A TUN device exists (`/dev/net/tun`): the kernel's networking could carry the tailnet. */
  readonly tunDevice: boolean;
  /** systemd runs this machine (`/run/systemd/system`): Tailscale's package runs tailscaled as its service. */
  readonly systemd: boolean;
}

/** Paths probed by `probeTailscaledHost` (tests point them elsewhere). */
export interface TailscaledProbePaths {
  readonly path: string;
  readonly tunDevice: string;
  readonly systemdDir: string;
}

/** The real paths: the PATH given, `/dev/net/tun`, `/run/systemd/system`. */
export function defaultProbePaths(path: string): TailscaledProbePaths {
  return { path, tunDevice: "/dev/net/tun", systemdDir: "/run/systemd/system" };
}

/** Finds tailscaled on the PATH and whether this machine has a TUN device and systemd. */
export async function probeTailscaledHost(paths: TailscaledProbePaths): Promise<TailscaledHost> {
  return {
    binary: await which("tailscaled", paths.path),
    tunDevice: await pathExists(paths.tunDevice),
    systemd: await pathExists(paths.systemdDir),
  };
}

/** How tailscaled is to run, or why it is not run here. */
export type TailscaledPlan =
  | { readonly ok: true; readonly argv: readonly string[]; readonly socket: string; readonly stateDir: string }
  | { readonly ok: false; readonly message: string };

/**
 * Plans the tailscaled command line. With no TUN device or no systemd (containers, minimal VMs):
 * userspace networking (`--tun=userspace-networking`, no root needed, inbound connections reach this
 * machine's loopback services), with its state and socket under `$STARAGENT_HOME/tailscale` and
 * its proxy on TAILSCALED_PROXY_ADDRESS. Where both exist, Tailscale's package already runs tailscaled
 * as a systemd service with kernel networking, the right tool there: nothing is started unless
 * `forceUserspace` asks for the userspace mode anyway. `extraArgs` are passed on as they are.
 */
export function planTailscaled(
  host: TailscaledHost,
  home: string,
  extraArgs: readonly string[],
  forceUserspace: boolean,
): TailscaledPlan {
  if (!host.binary) return { ok: false, message: TAILSCALED_INSTALL_HINT };
  if (host.tunDevice && host.systemd && !forceUserspace) {
    return {
      ok: false,
      message: [
        "this machine has a TUN device and systemd: run Tailscale as the system service its package installs",
        "  sudo systemctl enable --now tailscaled && sudo tailscale up",
        "('staragent system start tailscaled --userspace' runs it in its tmux session with userspace networking anyway)",
      ].join("\n"),
    };
  }
  const stateDir = join(home, TAILSCALE_DIR);
  const socket = join(stateDir, "tailscaled.sock");
  return {
    ok: true,
    stateDir,
    socket,
    argv: [
      host.binary,
      "--tun=userspace-networking",
      `--statedir=${stateDir}`,
      `--state=${join(stateDir, "tailscaled.state")}`,
      `--socket=${socket}`,
      `--socks5-server=${TAILSCALED_PROXY_ADDRESS}`,
      `--outbound-http-proxy-listen=${TAILSCALED_PROXY_ADDRESS}`,
      ...extraArgs,
    ],
  };
}

/** The absolute path of `name` in the first PATH folder holding an executable of that name. */
async function which(name: string, path: string): Promise<string | undefined> {
  for (const dir of path.split(delimiter)) {
    if (dir === "" || !dir.startsWith("/")) continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Whether `path` exists (tailscaled's device, systemd, and its socket once it listens). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
