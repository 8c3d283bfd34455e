import { describe, expect, it } from 'vitest';
import { namedSpeakers, sameSpeaker, speakerKey, speakerOf } from '../../src/text/speakers.js';

describe('who said a memory', () => {
  it('is metadata.speaker when it is a non-empty string, else the label of a transcript line', () => {
    expect(speakerOf('Caroline', 'Melanie: hello')).toBe('Caroline');
    expect(speakerOf('  ', 'Melanie: hello')).toBe('Melanie');
    expect(speakerOf(42, 'Dr. Ng: take two a day')).toBe('Dr. Ng');
    expect(speakerOf(null, 'Jean-Luc Picard: engage')).toBe('Jean-Luc Picard');
    expect(speakerOf(undefined, 'User: I moved to Lisbon')).toBe('User');
    expect(speakerOf('x'.repeat(101), 'Ana: hi')).toBe('Ana');
    // A capitalized heading reads as a label too; it only matters when a query names it.
    expect(speakerOf(undefined, 'Note: the invoice is late')).toBe('Note');
  });

  it('is nobody for content that is not a transcript line', () => {
    expect(speakerOf(undefined, 'the meeting: moved to 3pm')).toBeNull();
    expect(speakerOf(undefined, 'Meeting at 10:30 with Ana')).toBeNull();
    expect(speakerOf(undefined, 'One Two Three Four: too many words')).toBeNull();
    expect(speakerOf(undefined, 'Ana:no space after the colon')).toBeNull();
  });

  it('is named by a query that holds every word of the name, in any case', () => {
    const speakers = ['Caroline', 'Dr. Ng', 'Mary Ann'];
    expect(namedSpeakers("what did caroline's sister say?", speakers)).toEqual(new Set(['caroline']));
    expect(namedSpeakers('When did DR NG call?', speakers)).toEqual(new Set(['dr ng']));
    expect(namedSpeakers('Where does Mary live?', speakers)).toEqual(new Set());
    expect(namedSpeakers('Did Mary Ann and Caroline meet?', speakers)).toEqual(new Set(['mary ann', 'caroline']));
    expect(speakerKey('Dr. Ng')).toBe('dr ng');
  });

  it('is one speaker for the store path unless both memories name different speakers', () => {
    expect(sameSpeaker('Dr. Ng', 'dr ng')).toBe(true);
    expect(sameSpeaker('Jon', null)).toBe(true);
    expect(sameSpeaker(null, null)).toBe(true);
    expect(sameSpeaker('Jon', 'Gina')).toBe(false);
  });
});
