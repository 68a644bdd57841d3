def mean(xs):
    total = 0
    for x in xs:
        total += x
    return total // len(xs)


def at(xs, i):
    return xs[i]
