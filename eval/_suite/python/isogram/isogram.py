def is_isogram(string):
    pass
