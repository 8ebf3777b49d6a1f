"""QuantType and QuantFormat, with onnxruntime's names and values."""
import enum


class QuantType(enum.IntEnum):
    QInt8 = 0
    QUInt8 = 1
    QInt16 = 3
    QUInt16 = 4
    QFLOAT8E4M3FN = 2

    def __str__(self):
        return self.name

    @staticmethod
    def from_string(t):
        return QuantType[t]


class QuantFormat(enum.IntEnum):
    QOperator = 0
    QDQ = 1

    def __str__(self):
        return self.name

    @staticmethod
    def from_string(f):
        return QuantFormat[f]
