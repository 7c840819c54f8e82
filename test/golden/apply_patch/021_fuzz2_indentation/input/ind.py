def f():
    if x:
        return 1
    return 2
