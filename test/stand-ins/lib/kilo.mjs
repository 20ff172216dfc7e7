// Kilo CLI stand-in: opencode's TUI and database under Kilo's names ($XDG_DATA_HOME/kilo/kilo.db,
// the `Code` agent, `# <description>` in the permission dialog), and Kilo 7.7's reject box: Reject
// or Escape on the permission dialog opens `△ Reject permission`, whose Enter rejects (the turn is
// interrupted) and whose Escape goes back to the dialog. See README.md.
import { OpencodeAdapter } from "./opencode.mjs";
import { StandIn } from "./stand-in.mjs";

/** The words of the reject box. */
const REJECT_BOX = "Tell Kilo what to do differently";
/** The place of Reject among the dialog's choices. */
const REJECT_INDEX = 2;

class KiloAdapter extends OpencodeAdapter {
  constructor() {
    super({
      name: "kilo",
      version: "7.7.7",
      agent: "code",
      shellHeader: (call) => call.description || "Shell command",
    });
    this.rejectBox = undefined;
  }

  approvalWaiting(app, call, waiting) {
    if (!waiting) this.rejectBox = undefined;
    super.approvalWaiting(app, call, waiting);
  }

  approvalKey(app, key, pick) {
    if (this.rejectBox) {
      if (key.type === "enter") pick(REJECT_INDEX);
      else if (key.type === "escape") this.rejectBox = undefined;
      return true;
    }
    const reject = key.type === "escape" || (key.type === "enter" && app.selected === REJECT_INDEX);
    if (reject) this.rejectBox = REJECT_BOX;
    return reject;
  }
}

/** Runs the Kilo CLI stand-in in the current terminal. */
export function runKilo() {
  process.title = "kilo";
  new StandIn(new KiloAdapter()).start();
}
