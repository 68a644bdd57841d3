from app.stats import at

def main():
    print(at([1, 2], 5))

main()
