def greet(name):
    print(f"Hello, {name}!")
    return None

def main():
    greet("world")
