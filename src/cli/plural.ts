/** "1 turn", "0 turns", "3 summaries", "2 long-term entries": a count with its noun in the right number. */
export function count(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural(noun)}`;
}

function plural(noun: string): string {
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|ch|sh)$/.test(noun)) return `${noun}es`;
  return `${noun}s`;
}
