/**
 * Deterministic text for the scale benchmark: sentences drawn from a vocabulary with a Zipf-like
 * distribution, so that BM25 sees both terms nearly every memory holds and terms almost none does.
 */

/** mulberry32: small, fast, and the same sequence on every machine for a seed. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

// Ordered roughly from common to rare, since rank decides frequency.
const WORDS = (
  'customer order account payment support delivery service plan meeting team project price ' +
  'email phone call issue update product contract invoice report schedule office travel budget ' +
  'family home work weekend morning evening coffee lunch dinner trip flight hotel car school ' +
  'doctor appointment birthday gift garden kitchen house apartment rent lease insurance bank ' +
  'card refund discount subscription renewal upgrade laptop printer router password login ' +
  'network software license device battery screen camera charger cable package shipping ' +
  'warehouse vendor partner manager client colleague friend sister brother mother father ' +
  'daughter son wife husband neighbour dog cat horse bicycle train bus airport station city ' +
  'village mountain beach lake river forest park museum theatre concert festival holiday ' +
  'vacation conference workshop training course exam lesson teacher student library book ' +
  'novel magazine newspaper article podcast movie series music guitar piano violin drums ' +
  'painting photography pottery knitting cooking baking recipe soup salad pasta pizza bread ' +
  'cheese chocolate tea wine beer juice water allergy diet vegetarian vegan gluten peanut ' +
  'medicine vitamin fitness running swimming cycling yoga tennis football basketball hiking ' +
  'climbing skiing sailing fishing camping market grocery pharmacy bakery butcher tailor ' +
  'plumber electrician carpenter mechanic dentist lawyer accountant architect engineer nurse ' +
  'pilot chef farmer artist writer designer developer analyst consultant receptionist ' +
  'blue green red yellow orange purple silver golden wooden leather cotton woolen spicy sweet ' +
  'quiet noisy early late weekly monthly yearly urgent delayed cancelled confirmed pending ' +
  'prefers likes dislikes wants needs asked mentioned booked moved changed ordered returned ' +
  'cancelled renewed visited called emailed forgot remembered planned finished started ' +
  'postponed approved rejected reported fixed broke lost found bought sold borrowed lent ' +
  'aquarium bonsai calligraphy origami saxophone harpsichord trombone falconry beekeeping ' +
  'archery fencing kayak canoe glider telescope microscope sextant compass lantern hammock ' +
  'tapestry mosaic sculpture etching lithograph manuscript parchment quill inkwell abacus ' +
  'saffron cardamom nutmeg turmeric wasabi tamarind persimmon kumquat lychee rambutan durian ' +
  'quinoa amaranth sorghum teff spelt kombucha kefir miso tempeh seitan halloumi gruyere ' +
  'mandolin ukulele bagpipes accordion zither sitar didgeridoo marimba xylophone theremin ' +
  'lighthouse windmill aqueduct viaduct observatory planetarium conservatory greenhouse ' +
  'orchid peony magnolia hibiscus lavender rosemary thyme oregano basil chamomile jasmine'
).split(/\s+/);

const NAMES = (
  'Alice Bruno Chen Dara Elena Farid Greta Hiro Ines Jonas Kofi Lena Mateo Nadia Omar Priya ' +
  'Quinn Rosa Sven Tara Umar Vera Wen Ximena Yusuf Zora'
).split(/\s+/);

const GLUE = ['the', 'a', 'and', 'of', 'to', 'for', 'with', 'on', 'about', 'from', 'in', 'at'];

const MONTHS = 'January February March April May June July August September October November December'.split(' ');

/** Cumulative Zipf weights (exponent about 1) over the vocabulary, for sampling by binary search. */
const CUMULATIVE: number[] = (() => {
  let total = 0;
  return WORDS.map((_, rank) => (total += 1 / Math.pow(rank + 1, 1.05)));
})();

function zipfWord(random: () => number): string {
  const total = CUMULATIVE[CUMULATIVE.length - 1] ?? 1;
  const target = random() * total;
  let lo = 0;
  let hi = CUMULATIVE.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((CUMULATIVE[mid] ?? 0) < target) lo = mid + 1;
    else hi = mid;
  }
  return WORDS[lo] ?? 'word';
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** One memory's text: 6 to 20 words, sometimes a name, sometimes a date or a number. */
export function sentence(random: () => number): string {
  const length = 6 + Math.floor(random() * 15);
  const words: string[] = [];
  if (random() < 0.35) words.push(pick(random, NAMES));
  while (words.length < length) {
    words.push(random() < 0.3 ? pick(random, GLUE) : zipfWord(random));
  }
  const extra = random();
  if (extra < 0.15) words.push('on', pick(random, MONTHS), String(1 + Math.floor(random() * 28)));
  else if (extra < 0.25) words.push('for', String(10 + Math.floor(random() * 990)));
  const text = words.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

/** A recall query: a few words of the same vocabulary, now and then a name. */
export function query(random: () => number): string {
  const words: string[] = [];
  if (random() < 0.2) words.push(pick(random, NAMES));
  const length = 2 + Math.floor(random() * 4);
  while (words.length < length) words.push(zipfWord(random));
  return words.join(' ');
}
