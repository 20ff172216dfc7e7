import { createHash, randomBytes } from "node:crypto";
import { BoundedMap } from "../../common/bounded-map.js";
import type { ParsedMessage } from "./chat-parser.js";

/** Chats whose ids are remembered (one per session, pane and history size asked for); oldest forgotten first. */
export const MAX_TRACKED_CHATS = 256;
/** Messages compared when lining up a new read with the previous one: enough to rule out chance matches. */
const ALIGN_WINDOW = 16;

/** A parsed message with its id (its ordinal, kept across reads) and a digest of its content. */
export interface NumberedMessage {
  readonly id: number;
  readonly digest: string;
  readonly message: ParsedMessage;
}

/** One read of a chat with ids: `generation` changes whenever ids restart from a fresh numbering. */
export interface NumberedChat {
  readonly generation: string;
  readonly messages: readonly NumberedMessage[];
  /** The id the next message would get. */
  readonly nextId: number;
}

interface Tracked {
  readonly generation: string;
  base: number;
  digests: string[];
}

/** A short content digest of a message, so cursors can say what the client has without holding it. */
export function messageDigest(message: ParsedMessage): string {
  return createHash("sha256")
    .update(`${message.role}\0${message.toolName ?? ""}\0${message.toolTarget ?? ""}\0${message.text}`)
    .digest("base64url")
    .slice(0, 12);
}

/**
 * Gives chat messages ids that stay the same while a message stays in the bounded history, even as
 * older messages scroll off the top: each read is lined up with the previous read of the same chat,
 * and the numbering moves along by the messages that fell off. A read that lines up with nothing (the
 * screen was cleared, the CLI restarted) keeps counting upward, so old ids are never reused for
 * different messages. Memory is bounded to MAX_TRACKED_CHATS chats.
 */
export class MessageIds {
  private readonly chats = new BoundedMap<string, Tracked>(MAX_TRACKED_CHATS);

  /** Numbers `messages`, read now from the chat identified by `key`. */
  number(key: string, messages: readonly ParsedMessage[]): NumberedChat {
    const digests = messages.map(messageDigest);
    let tracked = this.chats.get(key);
    if (!tracked) {
      tracked = { generation: randomBytes(6).toString("base64url"), base: 0, digests: [] };
    } else {
      const offset = alignOffset(tracked.digests, digests);
      tracked.base += offset ?? tracked.digests.length;
    }
    tracked.digests = digests;
    this.chats.set(key, tracked);
    const base = tracked.base;
    return {
      generation: tracked.generation,
      messages: messages.map((message, i) => ({ id: base + i, digest: digests[i] ?? "", message })),
      nextId: base + messages.length,
    };
  }
}

/**
 * How many messages of `previous` fell off the top before `next` was read, or undefined when the two
 * reads do not line up. Two differences are allowed: the first message of `next` may be cut (the top
 * of the history or screen went through it), and the last message of `previous` may have grown (an
 * answer still streaming).
 */
export function alignOffset(previous: readonly string[], next: readonly string[]): number | undefined {
  for (let offset = 0; offset <= previous.length; offset++) {
    let exact = 0;
    let compatible = true;
    for (let i = 0; i < next.length && i + offset < previous.length && i < ALIGN_WINDOW; i++) {
      if (next[i] === previous[i + offset]) exact++;
      else if ((i === 0 && offset > 0) || i + offset === previous.length - 1) continue;
      else {
        compatible = false;
        break;
      }
    }
    if (compatible && (exact > 0 || offset === 0)) return offset;
  }
  return undefined;
}
