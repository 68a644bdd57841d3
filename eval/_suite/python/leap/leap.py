def leap_year(year):
    pass
