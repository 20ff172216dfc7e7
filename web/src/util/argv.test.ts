import { describe, expect, it } from "vitest";
import { splitArgv } from "./argv.js";

describe("splitArgv", () => {
  it("splits words like a shell, without expanding anything", () => {
    expect(splitArgv("codex --yolo")).toEqual({ argv: ["codex", "--yolo"] });
    expect(splitArgv(`npm run "dev server" 'a b'  c\\ d`)).toEqual({
      argv: ["npm", "run", "dev server", "a b", "c d"],
    });
    expect(splitArgv("echo $HOME *.ts `id` $(id) ; rm -rf /")).toEqual({
      argv: ["echo", "$HOME", "*.ts", "`id`", "$(id)", ";", "rm", "-rf", "/"],
    });
    expect(splitArgv(`say "" ''`)).toEqual({ argv: ["say", "", ""] });
    expect(splitArgv("   ")).toEqual({ argv: [] });
  });

  it("says what is wrong with an unfinished line", () => {
    expect(splitArgv(`echo "open`)).toEqual({ error: "A double quote is not closed." });
    expect(splitArgv("echo 'open")).toEqual({ error: "A single quote is not closed." });
    expect(splitArgv("echo \\")).toEqual({ error: "The command ends with a lone backslash." });
  });
});
