import { Cli } from "../../gen/staragent/v1/session_pb.js";
import type { CliDriver } from "./cli-driver.js";
import { KILO_BIN } from "./installed-clis.js";
import { opencodeCoreDriver, PERMISSION_CHOICES } from "./opencode-driver.js";
import { answerDialog, waitForScreen } from "./pane-screen.js";

/** The footer of the box Kilo's Escape (and Reject) opens on its permission dialog. */
const REJECT_BOX_FOOTER = "enter confirm  esc cancel";
/** How long Kilo may take to open the reject box (a redraw; a loaded 2-core machine takes seconds). */
const REJECT_BOX_TIMEOUT_MS = 15_000;

/**
 * The real Kilo CLI TUI, on opencode's core: opencode's driver with Kilo's `KILO_*` variables
 * (`KILO_CONFIG_CONTENT`, opencode's offline switches renamed, and its own session ingest and
 * telemetry switched off), and Escape then Enter on its permission dialog to cancel it.
 */
export const kiloDriver: CliDriver = opencodeCoreDriver({
  name: "kilo",
  label: "Kilo CLI 7.7.7",
  bin: KILO_BIN,
  version: "7.7.7",
  cli: Cli.KILO,
  envPrefix: "KILO",
  extraSwitches: ["KILO_DISABLE_SESSION_INGEST=1", "KILO_TELEMETRY_LEVEL=off"],
  async cancelApproval(tmux, target) {
    // Escape opens the reject box rather than rejecting; its Enter rejects.
    await answerDialog(tmux, target, PERMISSION_CHOICES, "Escape");
    await waitForScreen(tmux, target, (s) => s.includes(REJECT_BOX_FOOTER), "Kilo's reject box", REJECT_BOX_TIMEOUT_MS);
    await tmux.run("send-keys", "-t", target, "Enter");
  },
});
