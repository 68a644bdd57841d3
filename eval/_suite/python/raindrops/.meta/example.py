def convert(number):
    sounds = "".join(s for d, s in ((3, "Pling"), (5, "Plang"), (7, "Plong")) if number % d == 0)
    return sounds or str(number)
