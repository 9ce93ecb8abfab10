"""The judge of TODOs 1 and 2's 'any iterable' checks: a generator must give what the same list gives."""
AS_LIST = "the demonstrations as a list"
AS_GENERATOR = "the same demonstrations as a generator"


def judge(check):
    # a wrong value is the values check's point; this one is about generators only
    if check.matches(AS_LIST):
        check.same(AS_GENERATOR)
    else:
        check.expect(False, "the values are already wrong for a list (the values check says where); generators "
                            "are checked once a list gives the right result")
