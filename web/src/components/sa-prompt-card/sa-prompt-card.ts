import { Code, ConnectError } from "@connectrpc/connect";
import { consume } from "@lit/context";
import { html, nothing, type PropertyValues } from "lit";
import { property, state } from "lit/decorators.js";
import {
  type PendingPrompt,
  PendingPromptSchema,
  type PromptChoice,
  PromptEffect,
  type Session,
  StatusReason,
} from "../../../../gen/staragent/v1/session_pb.js";
import { describeError } from "../../api/errors.js";
import { type AppServices, appContext } from "../../state/app-context.js";
import { destructiveReason } from "../../state/destructive.js";
import { type PromptAnswer, promptAnswers } from "../../state/prompt-answers.js";
import { LightElement } from "../base/light-element.js";

/** How long a destructive choice's "Confirm" stays armed after its first press. */
export const CONFIRM_WINDOW_MS = 5_000;

/** Effects that allow the request (the ones a destructive request guards with a second step). */
const ALLOWING: ReadonlySet<PromptEffect> = new Set([PromptEffect.ALLOW_ONCE, PromptEffect.ALLOW_ALWAYS]);

/** What the card says after the person acted (an answer given is in `promptAnswers`, not here). */
type Outcome =
  | { readonly kind: "none" }
  | { readonly kind: "sending"; readonly label: string }
  | { readonly kind: "changed"; readonly message: string }
  | { readonly kind: "failed"; readonly message: string };

/**
 * A session's pending prompt in full, with its choices as buttons: the command in monospace, the
 * edit's diff line by line, the question with its options, a text box for "tell it instead". An
 * allowing choice whose request is destructive (destructiveReason) arms on the first press and
 * answers on a second within CONFIRM_WINDOW_MS; Deny never asks twice. Answers quote the prompt's
 * fingerprint, so one that meets another prompt is refused by the owning machine, and the card then
 * says "the prompt changed" and shows the new one. All text comes from the agent's screen and is
 * rendered as text, never HTML. `compact` is the session list's one line: what it is about and the
 * choices that need no text (tell-instead is in the session view).
 */
export class SaPromptCard extends LightElement {
  /** The session whose `pending_prompt` is shown. */
  @property({ attribute: false }) session?: Session;
  /** The session list's one line: what the prompt is about and its choices, no detail or text box. */
  @property({ type: Boolean }) compact = false;

  @consume({ context: appContext }) private app?: AppServices;
  @state() private outcome: Outcome = { kind: "none" };
  @state() private armed = "";
  @state() private text = "";
  private disarm?: ReturnType<typeof setTimeout>;
  private unsubscribe?: () => void;

  override connectedCallback(): void {
    super.connectedCallback();
    // An answer given from another card (the row, or the session view) shows here too.
    this.unsubscribe = promptAnswers.subscribe(() => this.requestUpdate());
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.disarm);
    this.unsubscribe?.();
  }

  /** What was answered to the prompt shown, kept until the status moves on from it (even when this card is re-created). */
  private get answered(): PromptAnswer | undefined {
    const s = this.session;
    const p = s?.pendingPrompt;
    if (!s || !p) return undefined;
    return promptAnswers.get(s.name, p.fingerprint);
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (!changed.has("session")) return;
    if (this.outcome.kind === "changed" && this.session?.statusReason !== StatusReason.INPUT_PROMPT) {
      this.outcome = { kind: "none" };
    }
  }

  protected override render() {
    const s = this.session;
    const p = s?.pendingPrompt;
    if (!s || !p || s.statusReason !== StatusReason.INPUT_PROMPT) return nothing;
    const answered = this.answered;
    const danger = destructiveReason(p, s.cwd);
    if (this.compact) return this.renderCompact(p, danger, answered);
    // data-fingerprint: which prompt the buttons answer (for people troubleshooting, and tests).
    return html`<section class="prompt-card" data-fingerprint=${p.fingerprint} aria-label="The agent is waiting for an answer">
      ${this.outcome.kind === "changed" ? html`<p class="prompt-changed" role="alert">${this.outcome.message}</p>` : nothing}
      <p class="prompt-question"><strong>${p.question}</strong></p>
      ${p.command ? html`<pre class="prompt-command mono">${p.command}</pre>` : nothing}
      ${p.filePath ? html`<p class="prompt-file mono">${p.filePath}</p>` : nothing}
      ${p.diff ? this.renderDiff(p.diff) : nothing}
      ${p.url ? html`<p class="prompt-url mono">${p.url}</p>` : nothing}
      ${p.detail ? html`<pre class="prompt-detail">${p.detail}</pre>` : nothing}
      ${p.truncated ? html`<p class="prompt-truncated">The screen cut this prompt: what it is about may be incomplete. Look at the terminal before allowing it.</p>` : nothing}
      ${danger ? html`<p class="prompt-danger">Allowing needs a second press: ${danger}.</p>` : nothing}
      ${
        answered
          ? html`<p class="prompt-answered" role="status">Answered “${answered.label}”; waiting for the agent to go on.</p>`
          : this.renderChoices(p, danger !== undefined)
      }
      ${this.outcome.kind === "failed" ? html`<p class="prompt-error" role="alert">${this.outcome.message}</p>` : nothing}
    </section>`;
  }

  private renderCompact(p: PendingPrompt, danger: string | undefined, answered: PromptAnswer | undefined) {
    const about = (p.command || p.filePath || p.url || p.question).split("\n")[0] ?? "";
    const outcome = this.outcome;
    return html`<div class="prompt-row" aria-label="The agent is waiting for an answer">
      <span class="prompt-subject mono" title=${p.command || p.filePath || p.url || p.question}>${about}</span>
      ${
        answered
          ? html`<span class="prompt-answered" role="status">Answered “${answered.label}”</span>`
          : outcome.kind === "changed" || outcome.kind === "failed"
            ? html`<span class="prompt-error" role="alert">${outcome.message}</span>`
            : html`<span class="prompt-choices">${p.choices
                .filter((c) => c.effect !== PromptEffect.TELL_INSTEAD)
                .map((c) => this.renderChoice(p, c, danger !== undefined, outcome.kind === "sending"))}</span>`
      }
    </div>`;
  }

  private renderChoice(p: PendingPrompt, c: PromptChoice, destructive: boolean, sending: boolean) {
    const guarded = destructive && ALLOWING.has(c.effect);
    const armed = this.armed === c.id;
    return html`<button
      class="prompt-choice effect-${PromptEffect[c.effect]?.toLowerCase() ?? "unspecified"} ${armed ? "armed" : ""}"
      data-choice=${c.id}
      title=${c.label}
      ?disabled=${sending || (c.effect === PromptEffect.TELL_INSTEAD && this.text.trim() === "")}
      @click=${() => this.press(p, c, guarded)}
    ><span class="choice-label">${armed ? `Confirm: ${c.label}` : c.label}</span></button>`;
  }

  private renderDiff(diff: string) {
    return html`<pre class="prompt-diff mono">${diff.split("\n").map((line) => {
      const kind = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";
      return html`<span class="diff-${kind}">${line}</span>\n`;
    })}</pre>`;
  }

  private renderChoices(p: PendingPrompt, destructive: boolean) {
    if (p.choices.length === 0) {
      return html`<p class="muted">This prompt has not been read in full yet; answer it in the terminal, or wait a moment.</p>`;
    }
    const sending = this.outcome.kind === "sending";
    const tell = p.choices.some((c) => c.effect === PromptEffect.TELL_INSTEAD);
    // The choices first, the text for "tell it instead" after them: on a phone the card is short, and
    // the answers are what must stay in sight (they also stick to the card's bottom as it scrolls).
    return html`
      <div class="prompt-choices">
        ${p.choices.map((c) => this.renderChoice(p, c, destructive, sending))}
      </div>
      ${
        tell
          ? html`<label class="prompt-text-label">What should it do instead?
              <textarea class="prompt-text" rows="2" .value=${this.text} @input=${(e: Event) => {
                this.text = (e.target as HTMLTextAreaElement).value;
              }}></textarea></label>`
          : nothing
      }`;
  }

  private press(p: PendingPrompt, choice: PromptChoice, guarded: boolean): void {
    if (guarded && this.armed !== choice.id) {
      this.armed = choice.id;
      clearTimeout(this.disarm);
      this.disarm = setTimeout(() => {
        this.armed = "";
      }, CONFIRM_WINDOW_MS);
      return;
    }
    this.armed = "";
    void this.answer(p, choice);
  }

  private async answer(p: PendingPrompt, choice: PromptChoice): Promise<void> {
    const s = this.session;
    if (!s || !this.app) return;
    this.outcome = { kind: "sending", label: choice.label };
    const text = choice.effect === PromptEffect.TELL_INSTEAD ? this.text : "";
    try {
      await this.app.hub.sessions.answerPrompt({ name: s.name, fingerprint: p.fingerprint, choiceId: choice.id, text });
      this.text = "";
      this.outcome = { kind: "none" };
      promptAnswers.record(s.name, { label: choice.label, fingerprint: p.fingerprint });
    } catch (err) {
      const e = ConnectError.from(err);
      if (e.code === Code.FailedPrecondition && e.rawMessage.startsWith("the prompt changed")) {
        const now = e.findDetails(PendingPromptSchema)[0];
        this.outcome = {
          kind: "changed",
          message: `The prompt changed before your answer arrived; nothing was typed.${now ? ` It now asks: ${now.question}${now.command ? ` (${now.command})` : ""}` : ""}`,
        };
      } else this.outcome = { kind: "failed", message: describeError(err) };
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-prompt-card": SaPromptCard;
  }
}
