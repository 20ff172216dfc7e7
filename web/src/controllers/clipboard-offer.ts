import type { ReactiveController, ReactiveControllerHost } from "lit";
import { type Osc52Choice, type Osc52ChoiceStore, osc52Decision } from "../terminal/osc52-consent.js";

/** How the offer reaches the clipboard and the person. */
export interface ClipboardOfferOptions {
  /** Writes to the clipboard; false when the browser refused. */
  copy(text: string): Promise<boolean>;
  toast(message: string, tone?: "info" | "error"): void;
  /** The session whose program writes (the person's answers are kept per session). */
  session(): string;
  /** The person's answers so far (osc52-consent.ts). */
  choices: Osc52ChoiceStore;
}

/**
 * Text a program asked to copy (OSC 52). The first write of a session waits in `asking` until the
 * person answers (`answer`); an allowed write goes to the clipboard. Browsers allow writing to the
 * clipboard only right after a person's action, so when the direct copy is refused the text waits in
 * `pending` for a tap on the button the host shows (`copyPending`).
 */
export class ClipboardOfferController implements ReactiveController {
  /** Text waiting for a person's tap ("" when none). */
  pending = "";
  /** Text a program asked to copy while the person has not yet said whether this session may ("" when none). */
  asking = "";

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly options: ClipboardOfferOptions,
  ) {
    host.addController(this);
  }

  /** The terminal is gone with its host's disconnection: an offer from it lapses. */
  hostDisconnected(): void {
    this.set("");
  }

  /** A program wrote OSC 52: copy it, drop it, or ask the person first, as their answers say. */
  request(text: string): void {
    const decision = osc52Decision(this.options.session(), this.options.choices);
    if (decision === "copy") void this.offer(text);
    else if (decision === "ask") {
      this.asking = text;
      this.host.requestUpdate();
    }
  }

  /** The person answered the question about `asking`: remembered for the session, and copied if allowed. */
  answer(choice: Osc52Choice): void {
    const text = this.asking;
    this.asking = "";
    this.options.choices.set(this.options.session(), choice);
    this.host.requestUpdate();
    if (choice === "allow") void this.offer(text);
  }

  /** Text allowed to reach the clipboard: copy now, or keep it for a tap. */
  async offer(text: string): Promise<void> {
    if (await this.options.copy(text)) {
      this.set("");
      this.options.toast("A program in the terminal copied text to your clipboard.");
    } else {
      this.set(text);
    }
  }

  /** The person tapped the offer: copy the waiting text. */
  async copyPending(): Promise<void> {
    if (await this.options.copy(this.pending)) {
      this.set("");
      this.options.toast("Copied.");
    } else {
      this.options.toast("The browser refused to copy. Select the text in the terminal and copy it instead.", "error");
    }
  }

  private set(text: string): void {
    this.pending = text;
    this.host.requestUpdate();
  }
}
