/** A progress bar for long commands, on stderr so that stdout keeps only results. */
export interface ProgressBar {
  update(done: number, total: number): void;
  /** Draws the last state and ends the line. */
  end(): void;
}

const WIDTH = 30;
/** Redraws at most this often: a terminal redraw per item would cost more than small items do. */
const REDRAW_MS = 100;

export function progressBar(label: string): ProgressBar {
  let last = 0;
  let state = { done: 0, total: 0 };
  const draw = () => {
    const { done, total } = state;
    const filled = total === 0 ? WIDTH : Math.min(WIDTH, Math.round((done / total) * WIDTH));
    process.stderr.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${done}/${total}`);
  };
  return {
    update(done, total) {
      state = { done, total };
      const now = performance.now();
      if (now - last < REDRAW_MS && done < total) return;
      last = now;
      draw();
    },
    end() {
      draw();
      process.stderr.write('\n');
    },
  };
}
