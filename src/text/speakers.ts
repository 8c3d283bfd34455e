/**
 * Who said a memory, as a field recall can match against names in the query. A memory's speaker is
 * `metadata.speaker` when it is a non-empty string, else the label of a transcript line: up to three
 * capitalized lowerWords and a colon at the very start of the content ("Caroline: I went…",
 * "User: …", "Dr. Ng: …").
 *
 * In conversation memory, a question about a person is answered by what that person said: on the
 * LoCoMo dev conversations, 97% of the evidence turns of a question that names one speaker are that
 * speaker's. The name is in every such turn's text too, but as a word that half the memories hold
 * it weighs almost nothing lexically; as a field it separates the two halves.
 */

const LABEL = /^\s*(\p{Lu}[\p{L}\p{M}'’.-]*(?:[ \t]\p{Lu}[\p{L}\p{M}'’.-]*){0,2})[ \t]*:\s/u;
const MAX_SPEAKER_CHARS = 100;

/** Enough of the content's start to hold a label: recall fetches only this much of each candidate. */
export const SPEAKER_HEAD_CHARS = 120;

export function speakerOf(metadataSpeaker: unknown, contentHead: string): string | null {
  if (typeof metadataSpeaker === 'string') {
    const speaker = metadataSpeaker.trim();
    if (speaker.length > 0 && speaker.length <= MAX_SPEAKER_CHARS) return speaker;
  }
  return LABEL.exec(contentHead)?.[1] ?? null;
}

const lowerWords = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Speakers compare by their lowerWords, in any case: "Dr. Ng" and "dr ng" are one speaker. */
export const speakerKey = (speaker: string): string => lowerWords(speaker).join(' ');

/**
 * Whether two memories may be one belief as far as their speakers go: unless both name a speaker
 * and the two differ. "I love the store" is one fact when Jon says it and another when Gina does,
 * so the store path neither merges nor supersedes across speakers (src/domain/store/store.ts).
 */
export function sameSpeaker(a: string | null, b: string | null): boolean {
  return a === null || b === null || speakerKey(a) === speakerKey(b);
}

/**
 * The keys of the speakers (among those given) that the query names: every word of the speaker's
 * name is a word of the query ("what did caroline's sister say" names "Caroline").
 */
export function namedSpeakers(query: string, speakers: Iterable<string>): Set<string> {
  const queryWords = new Set(lowerWords(query));
  const named = new Set<string>();
  for (const speaker of speakers) {
    const nameWords = lowerWords(speaker);
    if (nameWords.length > 0 && nameWords.every((w) => queryWords.has(w))) named.add(nameWords.join(' '));
  }
  return named;
}
