// Package values owns the value rules every codec format shares: integer
// ranges per width, float parsing at the field's width, RFC 3339 datetimes
// to the nanosecond, strict padded base64, UTF-8 and JSON-style float text,
// and the typed decode and encode errors with their stable codes.
//
// It must not know any wire format's syntax and must never put payload
// values into an error: errors carry a code, a field path and a fixed
// description.
package values

import (
	"errors"
	"strings"
)

// Code is the stable code of a decode or encode error. Codes never change
// meaning; clients may match on them.
type Code string

// Decode and encode error codes.
const (
	// Syntax: the payload is not well-formed in its format.
	CodeSyntax Code = "SYNTAX"
	// Empty: the payload holds no value.
	CodeEmpty Code = "EMPTY_PAYLOAD"
	// Trailing: data follows the payload's one value.
	CodeTrailing Code = "TRAILING_DATA"
	// ExpectedObject: the payload's value is not an object/map/record.
	CodeExpectedObject Code = "EXPECTED_OBJECT"
	// MissingField: a required field is absent.
	CodeMissingField Code = "MISSING_FIELD"
	// UnexpectedField: a STRICT wire schema met an undeclared field.
	CodeUnexpectedField Code = "UNEXPECTED_FIELD"
	// DuplicateField: a field name occurs twice in one object.
	CodeDuplicateField Code = "DUPLICATE_FIELD"
	// NullValue: null where a value is required (required field or
	// collection element).
	CodeNullValue Code = "NULL_VALUE"
	// TypeMismatch: the value has the wrong kind for the field.
	CodeTypeMismatch Code = "TYPE_MISMATCH"
	// NotInteger: a number with a fraction or exponent for an integer field.
	CodeNotInteger Code = "NOT_INTEGER"
	// OutOfRange: an integer outside its type's range, a finite number
	// beyond its float type's range (FloatRange), or a datetime outside
	// the nanosecond range.
	CodeOutOfRange Code = "OUT_OF_RANGE"
	// InvalidUTF8: text that is not valid UTF-8.
	CodeInvalidUTF8 Code = "INVALID_UTF8"
	// InvalidEscape: a malformed JSON escape, lone surrogates included.
	CodeInvalidEscape Code = "INVALID_ESCAPE"
	// ControlChar: a raw control character inside a JSON string.
	CodeControlChar Code = "CONTROL_CHARACTER"
	// InvalidBase64: bytes text that is not canonical padded base64.
	CodeInvalidBase64 Code = "INVALID_BASE64"
	// InvalidDatetime: text that is not a valid RFC 3339 datetime.
	CodeInvalidDatetime Code = "INVALID_DATETIME"
	// Shape: a fixed ARRAY axis with the wrong number of elements.
	CodeShape Code = "SHAPE"
	// TooDeep: nesting beyond the decoder's depth limit.
	CodeTooDeep Code = "TOO_DEEP"
	// TooLarge: the encoded payload exceeds the caller's size bound.
	CodeTooLarge Code = "TOO_LARGE"
	// RequiredNull: encoding met a null in a required field.
	CodeRequiredNull Code = "REQUIRED_NULL"
	// Unencodable: a value the wire format cannot carry (an unsigned
	// value above the Avro long range, a syslog header that breaks its
	// rules).
	CodeUnencodable Code = "UNENCODABLE"
	// Syslog: a syslog frame that breaks RFC 5424/3164 or the contract.
	CodeSyslog Code = "SYSLOG"
	// NonFinite: a NaN or an infinity where a JSON number is needed (a
	// program's output, or an element of the JSON view of a row).
	CodeNonFinite Code = "NON_FINITE"
	// Program: a JAQ program failed to evaluate.
	CodeProgram Code = "PROGRAM_ERROR"
	// Timeout: a JAQ program did not finish before its deadline.
	CodeTimeout Code = "PROGRAM_TIMEOUT"
	// TooManyMessages: a payload unfolded into more messages than the
	// unfolding limit (65,536).
	CodeTooManyMessages Code = "TOO_MANY_MESSAGES"
	// NoOutput: ON EMITTING or ON EMITTING BATCH yielded no value.
	CodeNoOutput Code = "NO_OUTPUT"
	// SeveralOutputs: ON EMITTING or ON EMITTING BATCH yielded more than
	// one value.
	CodeSeveralOutputs Code = "SEVERAL_OUTPUTS"
	// Busy: the extension workers could not take the payload now; it was
	// not judged.
	CodeBusy Code = "BUSY"
	// NoProgram: the codec declares no transformation for this direction.
	CodeNoProgram Code = "NO_TRANSFORMATION"
	// Protobuf: a protobuf payload or output that is not a valid instance
	// of its message.
	CodeProtobuf Code = "PROTOBUF"
)

// Error is a decode or encode error. It never quotes payload values: Path
// names the field (schema names and element indexes only) and Msg is a
// fixed description.
type Error struct {
	Code Code
	// Path is the field path, e.g. detections[2][5]; empty for the payload
	// as a whole.
	Path string
	// Msg says what was wrong.
	Msg string
	// Offset is the byte offset in the payload where the error was found,
	// or -1 when unknown.
	Offset int
}

// Error implements error: "field PATH: MSG" or "MSG", plus the offset.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString("field ")
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Offset >= 0 {
		b.WriteString(" (at byte ")
		b.WriteString(itoa(e.Offset))
		b.WriteByte(')')
	}
	return b.String()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return string(buf[i:])
}

// Errorf builds an *Error without an offset.
func Errorf(code Code, path, msg string) *Error {
	return &Error{Code: code, Path: path, Msg: msg, Offset: -1}
}

// CodeOf returns the code of the first *Error in err's chain, or "" when
// there is none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// JoinPath appends a field name to a path.
func JoinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// IndexPath appends an element index to a path.
func IndexPath(path string, i int) string {
	return path + "[" + itoa(i) + "]"
}
