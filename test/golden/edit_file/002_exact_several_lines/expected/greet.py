def greet(name):
    message = f"Hello, {name}!"
    print(message)
    return message

def main():
    greet("world")
