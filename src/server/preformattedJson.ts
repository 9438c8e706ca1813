/**
 * A handler result that writes its own JSON text, for the hottest small replies. Invariant: the
 * text is exactly what `JSON.stringify` gives for the same fields (`toJSON` returns those
 * fields, so any other serializer, and the specs, see the same value);
 * spec/server/fastpath/resultReply.spec.ts holds it there. The cost it saves: docs/performance.md.
 */
export abstract class PreformattedJson {
  /** `JSON.stringify(this.toJSON())`, built by hand. */
  abstract jsonText(): string;
  /** The plain value the text encodes. */
  abstract toJSON(): object;
}
