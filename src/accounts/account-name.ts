/*
 * Account-name rules (docs/accounts.md). A name is what people see in lists and e-mails, so
 * anything invisible or direction-changing is refused rather than cleaned up: a silently edited
 * name would differ from what the caller sent, and a hidden character could make two names look
 * alike. Everything visible (letters, marks, digits, punctuation, symbols, emoji) is accepted.
 */

export const ACCOUNT_NAME_MIN = 1;
export const ACCOUNT_NAME_MAX = 100;

const ZWJ = 0x200d;
const CANCEL_TAG = 0xe007f;

/** Bidirectional controls: embeddings, overrides and isolates, the Arabic letter mark, LRM and RLM. */
const isBidiControl = (cp: number) =>
  cp === 0x061c ||
  cp === 0x200e ||
  cp === 0x200f ||
  (cp >= 0x202a && cp <= 0x202e) ||
  (cp >= 0x2066 && cp <= 0x2069);

const isVariationSelector = (cp: number) =>
  (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);

/** Tag letters of emoji tag sequences (subdivision flags such as England's). */
const isTag = (cp: number) => cp >= 0xe0020 && cp <= 0xe007e;

const RE = {
  whiteSpace: /^\p{White_Space}$/u,
  control: /^\p{Cc}$/u,
  format: /^\p{Cf}$/u,
  surrogate: /^\p{Cs}$/u,
  privateUse: /^\p{Co}$/u,
  unassigned: /^\p{Cn}$/u,
  lineSeparator: /^[\p{Zl}\p{Zp}]$/u,
  // Extended_Pictographic also covers code points reserved for future emoji, so a newer emoji than
  // this runtime's Unicode tables is still accepted.
  pictographic: /^\p{Extended_Pictographic}$/u,
  modifier: /^\p{Emoji_Modifier}$/u,
};

const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;

/** The emoji a joiner or tag run attaches to: the code point before `i`, past selectors and skin tones. */
function emojiBefore(chars: readonly string[], i: number): boolean {
  let j = i - 1;
  while (j >= 0) {
    const cp = chars[j]!.codePointAt(0)!;
    if (isVariationSelector(cp) || RE.modifier.test(chars[j]!)) j--;
    else break;
  }
  return j >= 0 && RE.pictographic.test(chars[j]!);
}

/** A tag at `i` is fine inside `<emoji> tag… CANCEL TAG`. */
function inTagSequence(chars: readonly string[], i: number): boolean {
  let start = i;
  while (start > 0 && isTag(chars[start - 1]!.codePointAt(0)!)) start--;
  let end = i;
  while (end < chars.length && isTag(chars[end]!.codePointAt(0)!)) end++;
  const cp = chars[i]!.codePointAt(0)!;
  // A cancel tag closes a run of at least one tag letter.
  if (cp === CANCEL_TAG) return start < i && emojiBefore(chars, start);
  return chars[end]?.codePointAt(0) === CANCEL_TAG && emojiBefore(chars, start);
}

/** Why character `i` is refused, or undefined when it is fine where it stands. */
function characterProblem(chars: readonly string[], i: number): string | undefined {
  const ch = chars[i]!;
  const cp = ch.codePointAt(0)!;
  if (RE.surrogate.test(ch)) return "must not contain a lone surrogate";
  if (RE.control.test(ch)) return "must not contain control characters";
  if (isBidiControl(cp)) return "must not contain bidirectional control characters";
  if (cp === ZWJ) {
    const next = chars[i + 1];
    return emojiBefore(chars, i) && next !== undefined && RE.pictographic.test(next)
      ? undefined
      : "may contain a zero-width joiner only between two emoji";
  }
  if (isTag(cp) || cp === CANCEL_TAG) {
    return inTagSequence(chars, i) ? undefined : "must not contain zero-width or invisible format characters";
  }
  if (RE.format.test(ch)) return "must not contain zero-width or invisible format characters";
  if (isVariationSelector(cp)) {
    // A selector picks how the character before it is drawn; with nothing visible before it, it is
    // an invisible character of its own.
    const prev = chars[i - 1];
    return prev !== undefined && !RE.whiteSpace.test(prev) && !isVariationSelector(prev.codePointAt(0)!)
      ? undefined
      : "may contain a variation selector only after an emoji or other visible character";
  }
  if (RE.lineSeparator.test(ch)) return "must not contain line or paragraph separators";
  if (RE.privateUse.test(ch)) return "must not contain private-use characters";
  if (RE.unassigned.test(ch) && !RE.pictographic.test(ch)) return "must not contain unassigned code points";
  return undefined;
}

/**
 * Why `name` is not an acceptable account name, as text for the `accountName` error; undefined
 * when it is fine. Lengths and positions count Unicode code points (a lone surrogate counts as one).
 */
export function accountNameProblem(name: string): string | undefined {
  // Array.from splits by code point and keeps lone surrogates as one-unit elements.
  const chars = Array.from(name);
  if (chars.length < ACCOUNT_NAME_MIN || chars.length > ACCOUNT_NAME_MAX) {
    return `must be ${ACCOUNT_NAME_MIN} to ${ACCOUNT_NAME_MAX} characters long (got ${chars.length})`;
  }
  const first = chars[0]!;
  const last = chars[chars.length - 1]!;
  for (const [ch, at] of [
    [first, 1],
    [last, chars.length],
  ] as const) {
    if (RE.whiteSpace.test(ch)) {
      return `must not start or end with whitespace (${hex(ch.codePointAt(0)!)} at character ${at}); it is not trimmed`;
    }
  }
  for (let i = 0; i < chars.length; i++) {
    const problem = characterProblem(chars, i);
    if (problem) return `${problem} (${hex(chars[i]!.codePointAt(0)!)} at character ${i + 1})`;
  }
  return undefined;
}
