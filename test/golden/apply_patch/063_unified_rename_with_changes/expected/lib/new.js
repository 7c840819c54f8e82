const a = 1;
const b = 3;
export { a, b };
