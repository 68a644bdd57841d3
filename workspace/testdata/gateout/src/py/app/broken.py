def f(x):
    if x > 1
        return x
