//! The four C-like languages' profiles: each one's grammar and the table of node kinds the
//! language-independent code in [`CFile`](super::CFile) looks for.

use traparena_task::Language;

/// A language [`CFile`](super::CFile) parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CLang {
    /// C++ (`.cpp .cc .cxx .hpp .h .hh`).
    Cpp,
    /// Java (`.java`).
    Java,
    /// Go (`.go`).
    Go,
    /// Rust (`.rs`).
    Rust,
}

impl CLang {
    /// The C-like profile of `language`; `None` for Python and JavaScript, which have their
    /// own modules.
    pub fn of(language: Language) -> Option<CLang> {
        match language {
            Language::Cpp => Some(CLang::Cpp),
            Language::Java => Some(CLang::Java),
            Language::Go => Some(CLang::Go),
            Language::Rust => Some(CLang::Rust),
            _ => None,
        }
    }

    pub(super) fn grammar(self) -> tree_sitter::Language {
        match self {
            CLang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            CLang::Java => tree_sitter_java::LANGUAGE.into(),
            CLang::Go => tree_sitter_go::LANGUAGE.into(),
            CLang::Rust => tree_sitter_rust::LANGUAGE.into(),
        }
    }

    pub(super) fn kinds(self) -> &'static Kinds {
        match self {
            CLang::Cpp => &CPP,
            CLang::Java => &JAVA,
            CLang::Go => &GO,
            CLang::Rust => &RUST,
        }
    }
}

/// The node kinds the language-independent code looks for, per language.
#[derive(Debug)]
pub(super) struct Kinds {
    /// A conditional with `condition` and `consequence` fields.
    pub(super) if_: &'static str,
    /// A `return`.
    pub(super) return_: &'static str,
    /// Numbers.
    pub(super) numbers: &'static [&'static str],
    /// Strings: their content is the text of their children of the kinds in `string_parts`.
    pub(super) strings: &'static [&'static str],
    /// The children of a string that make up its content.
    pub(super) string_parts: &'static [&'static str],
    /// Characters (the node's text, quotes included).
    pub(super) chars: &'static [&'static str],
    /// `true` and `false`.
    pub(super) booleans: &'static [&'static str],
    /// The null value.
    pub(super) null: &'static [&'static str],
    /// A list written out whose items are its named children (`{1, 2}`, `[1, 2]`).
    pub(super) lists: &'static [&'static str],
    /// `==`, `!=` and their spellings.
    pub(super) equality: &'static [&'static str],
    /// An exception handler with a `body` field (C++, Java).
    pub(super) catch: &'static str,
    /// Throwing again.
    pub(super) throw: &'static [&'static str],
    /// The field of a unary expression holding its operand (none: its only named child).
    pub(super) unary_operand: Option<&'static str>,
}

pub(super) const CPP: Kinds = Kinds {
    if_: "if_statement",
    return_: "return_statement",
    numbers: &["number_literal"],
    strings: &["string_literal", "raw_string_literal"],
    string_parts: &["string_content", "escape_sequence", "raw_string_content"],
    chars: &["char_literal"],
    booleans: &["true", "false"],
    null: &["nullptr"],
    lists: &["initializer_list"],
    equality: &["==", "!=", "not_eq"],
    catch: "catch_clause",
    throw: &["throw_statement"],
    unary_operand: Some("argument"),
};

pub(super) const JAVA: Kinds = Kinds {
    if_: "if_statement",
    return_: "return_statement",
    numbers: &[
        "decimal_integer_literal",
        "hex_integer_literal",
        "octal_integer_literal",
        "binary_integer_literal",
        "decimal_floating_point_literal",
        "hex_floating_point_literal",
    ],
    strings: &["string_literal"],
    string_parts: &[
        "string_fragment",
        "multiline_string_fragment",
        "escape_sequence",
    ],
    chars: &["character_literal"],
    booleans: &["true", "false"],
    null: &["null_literal"],
    lists: &["array_initializer"],
    equality: &["==", "!="],
    catch: "catch_clause",
    throw: &["throw_statement"],
    unary_operand: Some("operand"),
};

pub(super) const GO: Kinds = Kinds {
    if_: "if_statement",
    return_: "return_statement",
    numbers: &["int_literal", "float_literal", "imaginary_literal"],
    strings: &["interpreted_string_literal", "raw_string_literal"],
    string_parts: &[
        "interpreted_string_literal_content",
        "raw_string_literal_content",
        "escape_sequence",
    ],
    chars: &["rune_literal"],
    booleans: &["true", "false"],
    null: &["nil"],
    lists: &[],
    equality: &["==", "!="],
    catch: "",
    throw: &[],
    unary_operand: Some("operand"),
};

pub(super) const RUST: Kinds = Kinds {
    if_: "if_expression",
    return_: "return_expression",
    numbers: &["integer_literal", "float_literal"],
    strings: &["string_literal", "raw_string_literal"],
    string_parts: &["string_content", "escape_sequence"],
    chars: &["char_literal"],
    booleans: &["boolean_literal"],
    null: &[],
    lists: &["array_expression"],
    equality: &["==", "!="],
    catch: "",
    throw: &[],
    unary_operand: None,
};
