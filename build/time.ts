/** UTC day of a Unix-second instant: `1757203200` → `2025-09-07`. */
export function utcDay(unixSec: number): string {
  return new Date(unixSec * 1000).toISOString().slice(0, 10);
}
