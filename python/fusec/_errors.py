"""The package's exceptions. Misuse of a call (a wrong dtype, shape or
device) raises TypeError or ValueError, as Python code does; what fails in
the library or the GPU raises fusec.Error; an error in a program raises
fusec.CompileError, whose text is the located diagnostic with its caret."""

__all__ = ["Error", "CompileError"]


class Error(RuntimeError):
    """A failure of fusec or of the GPU. `status` is the C API's status name
    ("FZ_ERR_NO_DEVICE", "FZ_ERR_CUDA", ...)."""

    def __init__(self, message, status="FZ_ERR_INTERNAL"):
        super().__init__(message)
        self.status = status


class CompileError(Error):
    """An error in a program: str() is the diagnostic as fusec prints it,

        prog.fz:3:9: error: unknown name 'y'
        out z = y + 1
                ^

    and the attributes say where: file, line, column (1-based; 0 when the
    error has no location), length (columns underlined) and message (the
    error alone, without location)."""

    def __init__(self, rendered, file="", line=0, column=0, length=1, message=None,
                 status="FZ_ERR_PROGRAM"):
        super().__init__(rendered.rstrip("\n"), status=status)
        self.file, self.line, self.column, self.length = file, line, column, length
        self.message = message if message is not None else rendered.rstrip("\n")
