const DAY_MS = 86_400_000;

/** effective = confidence × e^(−rate × days since last reinforcement), computed at read time. */
export function effectiveConfidence(confidence: number, ratePerDay: number, lastReinforcedAt: Date, now: Date): number {
  const days = Math.max(0, (now.getTime() - lastReinforcedAt.getTime()) / DAY_MS);
  return confidence * Math.exp(-ratePerDay * days);
}
