"""Arithmetic over a syntax tree of numbers and + - * / ** only: how a figure code computes (the
model's expression, a question's own definition of a metric) is evaluated, never ``eval``."""

from __future__ import annotations

import ast


class ExpressionError(ValueError):
    """The expression is not arithmetic over the figures given, or cannot be evaluated."""


_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def arithmetic(node: ast.expr) -> float:
    """The value of an arithmetic syntax tree; anything but numbers and + - * / ** is refused."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = arithmetic(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPERATORS):
        left, right = arithmetic(node.left), arithmetic(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return left / right
        if abs(right) > 10:
            raise ExpressionError("an exponent over 10 is not a financial formula")
        return float(left**right)
    raise ExpressionError(f"not arithmetic: {ast.unparse(node)}")
