/**
 * The deterministic extractor: what answers without a model, or when the model fails.
 *
 * It reads the user's turns only (the assistant's are its own chatter, system turns are set-up),
 * sentence by sentence, splits compound sentences where a new clause starts with its own subject
 * ("I live in Lisbon and I work as a nurse") or where a pleasantry, a question or a wish follows a
 * statement ("I'm vegan, sorry to be a pain", "I'm anxious, so someone gentle would be great"), and
 * judges each piece alone. It keeps a piece only when it is a declarative statement by the speaker
 * about themselves or what is theirs ("I ...", "We ...", "My ...", "Our ..."), a wish ("someone
 * gentle would be great"), or a standing instruction ("Please always ...", "Don't call me before
 * 10am"). It drops questions, greetings, thanks, filler, hedges and hypotheticals, and pieces that
 * lean on the conversation to be understood ("I like it", "we can't get one"): a memory must make
 * sense alone. The one pronoun it reads is a "he", "she" or "they" right after a relation the
 * speaker has just named ("my daughter Mila needs a check-up, she is seven").
 *
 * Kept clauses are rewritten into the third person: "I prefer email" → "The user prefers email".
 *
 * The steps, each in its file under ./heuristic/: pieces.ts cuts a message into sentences and
 * clauses, subjects.ts finds whom a piece is about, judge.ts says what is left out and the kind of
 * what is kept, rewrite.ts puts it in the third person; words.ts holds the words more than one reads.
 *
 * Pure and linear in the input: no regular expression here backtracks on long text.
 */

import type { ConversationMessage, ExtractedFact, Extractor, FactKind } from './extractor.js';
import { FIRST_PERSON, lower, firstWord } from './heuristic/words.js';
import { relationOf, resolvePronoun } from './heuristic/subjects.js';
import { isAnaphoric, isHedged, REQUEST, isFiller, kindOf } from './heuristic/judge.js';
import {
  splitSentences,
  endsWithQuestionMark,
  isQuestion,
  reasonBeforeQuestion,
  stripOpeners,
  stripClosers,
  splitClauses,
} from './heuristic/pieces.js';
import {
  MAX_FACT_CHARS,
  moveLeadingAdverbial,
  type Speaker,
  speakerOfMessage,
  rewriteFirstPerson,
  rewriteInstruction,
  finish,
  wishOf,
} from './heuristic/rewrite.js';

/** "Please remember that I'm allergic to nuts": the statement is what is to be remembered. */
const REMEMBER =
  /^(?:please\s+)?(?:remember|note|keep in mind|be aware|fyi|for the record|just so you know)(?:\s+that)?[\s,:]+/iu;

/** The fact of one piece of a sentence of the speaker's, or nothing. */
function factSentence(rawClause: string, speaker: Speaker): string | undefined {
  // Far longer than any statement it could keep: not worth reading.
  if (rawClause.length > 4 * MAX_FACT_CHARS) return undefined;
  const clause = moveLeadingAdverbial(stripClosers(stripOpeners(stripOpeners(rawClause).replace(REMEMBER, ''))));
  if (!clause) return undefined;
  const wish = wishOf(clause, speaker);
  if (wish !== undefined) return wish;
  if (isHedged(clause) || isAnaphoric(clause)) return undefined;
  const opener = firstWord(clause);
  if (FIRST_PERSON.has(opener)) {
    if (isFiller(clause) || REQUEST.test(clause)) return undefined;
    const statement = rewriteFirstPerson(clause, speaker);
    // "I'm Priya" from Priya says nothing her name does not.
    if (statement === undefined || lower(statement) === lower(`${speaker.subject} is ${speaker.subject}`)) {
      return undefined;
    }
    return finish(statement);
  }
  const instruction = rewriteInstruction(clause, speaker);
  return instruction === undefined ? undefined : finish(instruction);
}

/** The facts of one user message, in the order said, without repeats. */
export function factsOfMessage(message: ConversationMessage): { content: string; kind: FactKind }[] {
  if (message.role !== 'user') return [];
  const speaker = speakerOfMessage(message);
  const facts: { content: string; kind: FactKind }[] = [];
  const seen = new Set<string>();
  // The relation the previous piece was about, for a "she" or "he" that follows it.
  let relation: string | undefined;
  for (const sentence of splitSentences(message.content)) {
    const asks = endsWithQuestionMark(sentence);
    const clauses = splitClauses(sentence);
    for (const [i, clause] of clauses.entries()) {
      // Each piece is judged alone: the question mark belongs to the last one only, and a reason
      // given for a question ("Since I'm diabetic, …?") is kept whichever piece holds it.
      const question = isQuestion(clause) || (asks && i === clauses.length - 1);
      const piece = question || asks ? reasonBeforeQuestion(clause) : undefined;
      if (question && piece === undefined) {
        relation = undefined;
        continue;
      }
      const stripped = stripOpeners(piece ?? clause);
      // "Oh, and she …": an opener alone keeps the relation for the pronoun after it.
      if (!/[\p{L}\p{N}]/u.test(stripped)) continue;
      const resolved = resolvePronoun(stripped, relation);
      relation = relationOf(resolved);
      const content = factSentence(resolved, speaker);
      if (content === undefined || seen.has(lower(content))) continue;
      seen.add(lower(content));
      facts.push({ content, kind: kindOf(content) });
    }
  }
  return facts;
}

export function createHeuristicExtractor(): Extractor {
  return {
    id: 'heuristic',
    extract: (messages) =>
      Promise.resolve(
        messages.flatMap((message, index): ExtractedFact[] =>
          factsOfMessage(message).map((fact) => ({ ...fact, message: index })),
        ),
      ),
  };
}
