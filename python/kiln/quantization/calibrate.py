"""CalibrationDataReader and CalibrationMethod, with onnxruntime's names."""
import abc
import enum


class CalibrationMethod(enum.Enum):
    MinMax = 0
    Entropy = 1
    Percentile = 2
    Distribution = 3


class CalibrationDataReader(metaclass=abc.ABCMeta):
    """Subclass it and return one feed dict (input name -> numpy array) per get_next() call, None
    when there are no more."""

    @abc.abstractmethod
    def get_next(self) -> dict:
        raise NotImplementedError

    def __iter__(self):
        return self

    def __next__(self):
        result = self.get_next()
        if result is None:
            raise StopIteration
        return result

    def set_range(self, start_index: int, end_index: int):
        pass
