export function add(a, b) {
  return Number(a) + Number(b);
}
