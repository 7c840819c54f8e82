function a() {
  let n = 0;
  return n;
}

function b() {
  let n = 0;
  return n;
}
