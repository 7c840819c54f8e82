def greet(name):
    print("Hi " + name)
    return None

def main():
    greet("world")
