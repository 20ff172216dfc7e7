import { describe, expect, it } from "vitest";
import { guessDeviceName, PUSH_DEVICE_KEY, storedDevice } from "./push-device.js";

describe("guessDeviceName", () => {
  it("names the system and the browser from the user agent", () => {
    expect(
      guessDeviceName(
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36",
      ),
    ).toBe("Android, Chrome");
    expect(
      guessDeviceName(
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
      ),
    ).toBe("iPhone, Safari");
    expect(guessDeviceName("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")).toBe(
      "Linux, Firefox",
    );
    expect(
      guessDeviceName(
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36 Edg/131.0",
      ),
    ).toBe("Windows, Edge");
    expect(guessDeviceName("curl/8.5")).toBe("Device");
  });
});

describe("storedDevice", () => {
  const storage = (value: string | null) => ({
    getItem: (key: string) => (key === PUSH_DEVICE_KEY ? value : null),
    setItem: () => undefined,
    removeItem: () => undefined,
  });

  it("reads what the page stored, and nothing from unreadable or foreign text", () => {
    expect(storedDevice(storage('{"name":"pushSubscriptions/ab12","displayName":"Pixel"}'))).toEqual({
      name: "pushSubscriptions/ab12",
      displayName: "Pixel",
    });
    expect(storedDevice(storage("{not json"))).toBeUndefined();
    expect(storedDevice(storage('{"name":5}'))).toBeUndefined();
    expect(storedDevice(storage(null))).toBeUndefined();
    expect(storedDevice(undefined)).toBeUndefined();
  });
});
