def hello():
    return "Goodbye, Mars!"
