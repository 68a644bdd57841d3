const unused = 1;

function compare(a, b) {
  if (a == b) {
    return missing;
  }
  return 0;
}

module.exports = { compare };
