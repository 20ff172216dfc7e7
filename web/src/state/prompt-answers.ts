/** What a person answered to one prompt: the choice's label and the prompt it answered. */
export interface PromptAnswer {
  readonly label: string;
  readonly fingerprint: string;
}

/** Sessions whose answer is remembered at once: far above any list; the oldest are forgotten past it. */
const MAX_REMEMBERED = 500;

/**
 * The answers given from this page, by session name, until the session's prompt moves on. They live
 * here and not in a prompt card, because the session list's virtual window re-creates its rows (and
 * their cards) as it scrolls or re-sorts: an answer kept in the row element was lost with it, and the
 * row offered the choices again for a prompt already answered. Cards in the list and the session
 * view share it, so both say what was answered.
 */
export class PromptAnswers {
  private readonly answers = new Map<string, PromptAnswer>();
  private readonly listeners = new Set<() => void>();

  /** The answer given to `name`'s prompt `fingerprint`; forgets an answer to any other prompt. */
  get(name: string, fingerprint: string): PromptAnswer | undefined {
    const answer = this.answers.get(name);
    if (!answer) return undefined;
    if (answer.fingerprint === fingerprint) return answer;
    // The status moved on from the answered prompt (another prompt, or none): the answer is done.
    this.answers.delete(name);
    return undefined;
  }

  /** Remembers that `label` answered `name`'s prompt `fingerprint`, and tells every subscriber. */
  record(name: string, answer: PromptAnswer): void {
    this.answers.delete(name);
    this.answers.set(name, answer);
    while (this.answers.size > MAX_REMEMBERED) {
      const oldest = this.answers.keys().next().value;
      if (oldest === undefined) break;
      this.answers.delete(oldest);
    }
    for (const l of this.listeners) l();
  }

  /** Calls `listener` after each answer recorded; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** The page's one record of answers (every prompt card reads and writes it). */
export const promptAnswers = new PromptAnswers();
