def hello():
    return "Hello, World!"
