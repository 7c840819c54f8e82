def f():
    if x:
        return 10
    return 2
