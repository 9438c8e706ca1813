/**
 * The rendezvous trust model's small pieces (README "Rendezvous"): which environment ids
 * exist, which token opens which environment, how tokens are compared, how untrusted text
 * reaches the log.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Environment ids: 1 to 128 characters of `A-Z a-z 0-9 . _ : -`, starting with a letter or
 * digit. Anything else is refused with 400 before it reaches the store or the log.
 */
export const ENVIRONMENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function isEnvironmentId(text: string): boolean {
  return ENVIRONMENT_ID_PATTERN.test(text);
}

/** An executor token and a harness token; they must differ. */
export interface TokenPair {
  readonly executor: string;
  readonly harness: string;
}

/**
 * Tokens: one pair for every environment, and pairs for single environments. An environment
 * with its own pair is opened by that pair only.
 */
export interface RendezvousTokens {
  readonly shared: TokenPair;
  readonly perEnvironment?: ReadonlyMap<string, TokenPair>;
}

/** Throws a RangeError naming the problem: blank, equal or reused tokens. */
export function checkTokens(tokens: RendezvousTokens): void {
  const pairs: [string, TokenPair][] = [['shared', tokens.shared]];
  for (const [id, pair] of tokens.perEnvironment ?? []) {
    if (!isEnvironmentId(id)) throw new RangeError(`token file names an invalid environment id`);
    pairs.push([`environment ${id}`, pair]);
  }
  const executorTokens = new Set(pairs.map(([, pair]) => pair.executor));
  for (const [name, pair] of pairs) {
    if (pair.executor.trim() === '' || pair.harness.trim() === '') {
      throw new RangeError(`rendezvous ${name} tokens must not be blank`);
    }
    if (pair.executor === pair.harness || executorTokens.has(pair.harness)) {
      throw new RangeError(
        `rendezvous ${name} harness token equals an executor token: give harnesses their own token`,
      );
    }
  }
}

export function tokensFor(tokens: RendezvousTokens, environmentId: string): TokenPair {
  return tokens.perEnvironment?.get(environmentId) ?? tokens.shared;
}

/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
export function tokenMatches(given: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * Text from the network as it may appear in a log line: control characters, DEL, C1
 * controls, line/paragraph separators and backslashes escaped, at most 200 characters.
 */
export function escapeForLog(text: string): string {
  const clipped = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return clipped.replace(
    /[\\\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
