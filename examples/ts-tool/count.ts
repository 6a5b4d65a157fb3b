// Counting, in its own module: plugins may import their own files.
export interface Counts {
  words: number;
  lines: number;
  chars: number;
}

export function count(text: string): Counts {
  const words = text.split(/\s+/).filter((w) => w.length > 0).length;
  const lines = text.length === 0 ? 0 : text.split("\n").length;
  return { words, lines, chars: [...text].length };
}
