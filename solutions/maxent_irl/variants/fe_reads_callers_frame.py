"""Returns an object whose __array__/tolist/__float__ read expected values from the caller's frames (issue 13.2)."""
KIND = "wrong"
EXPECTED = {"test_feature_expectation": 0, "test_feature_expectation_iterable": 0}


# answer cell: feature_expectation
class FrameReader:
    """Looks like an array, but answers with whatever list of floats a calling frame holds."""

    def _peek(self):
        import sys
        frame = sys._getframe(1)
        while frame is not None:
            for value in list(frame.f_locals.values()):
                if isinstance(value, list) and value and all(isinstance(x, float) for x in value):
                    return value
            frame = frame.f_back
        return [0.0]

    def __array__(self, dtype=None, copy=None):
        return np.array(self._peek(), dtype=dtype)

    def tolist(self):
        return self._peek()

    def __float__(self):
        return float(self._peek()[0])

    def __len__(self):
        return len(self._peek())

    def __iter__(self):
        return iter(self._peek())

    @property
    def shape(self):
        return (len(self._peek()),)


def feature_expectation_from_trajectories(features, demos):
    return FrameReader()
