"""placeholder"""
def add_arguments(ap): pass
def main(args): return 2
