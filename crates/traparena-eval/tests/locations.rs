//! Where a reference patch that adds functions or methods is located: by what exists in the
//! original code (a new method by its class, a new module-level function by its lines), so
//! that such a reference validates and a candidate editing the same place overlaps it.

use std::path::Path;

use traparena_eval::analysis::{any_overlap, patch_locations};
use traparena_task::Patch;

const OLD: &str = "import ast\n\n\nclass Rewriter:\n    def visit(self, node):\n        return node\n\n    def visit_Assert(self, node):\n        return self.visit(node)\n\n\ndef helper():\n    return 1\n";

fn locations(new: &str) -> Vec<String> {
    let diff = diff("rewrite.py", OLD, new);
    let patch = Patch::parse(&diff, Path::new("reference.patch")).unwrap();
    patch_locations(&patch, |_| Some(OLD.to_owned()), |_| Some(new.to_owned()))
        .iter()
        .map(|l| l.to_string())
        .collect()
}

fn diff(path: &str, old: &str, new: &str) -> String {
    let body = diffy::create_patch(old, new).to_string();
    let hunks = body
        .split_once("\n@@")
        .map(|(_, b)| format!("@@{b}"))
        .unwrap();
    format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{hunks}")
}

#[test]
fn a_new_method_is_located_by_its_class() {
    let new = OLD.replace(
        "    def visit_Assert(self, node):\n",
        "    def _visit_all(self, node):\n        return [node]\n\n    def visit_Assert(self, node):\n",
    );
    assert_eq!(locations(&new), ["rewrite.py:Rewriter"]);
}

#[test]
fn a_new_method_and_an_edit_of_an_old_one_keep_the_old_one() {
    let new = OLD
        .replace(
            "    def visit_Assert(self, node):\n        return self.visit(node)\n",
            "    def visit_Assert(self, node):\n        return self._visit_all(node)\n\n    def _visit_all(self, node):\n        return [node]\n",
        );
    let locs = locations(&new);
    assert!(
        locs.contains(&"rewrite.py:Rewriter.visit_Assert".to_owned()),
        "{locs:?}"
    );
    assert!(locs.contains(&"rewrite.py:Rewriter".to_owned()), "{locs:?}");
}

#[test]
fn a_new_module_level_function_is_located_by_its_lines() {
    let new = format!("{OLD}\n\ndef added():\n    return 2\n");
    let locs = locations(&new);
    assert_eq!(locs.len(), 1, "{locs:?}");
    assert!(locs[0].starts_with("rewrite.py:1"), "{locs:?}");
    assert!(!locs[0].contains("(new)"), "{locs:?}");
}

#[test]
fn a_candidate_editing_the_class_overlaps_a_reference_that_adds_a_method() {
    let reference = OLD.replace(
        "    def visit_Assert(self, node):\n",
        "    def _visit_all(self, node):\n        return [node]\n\n    def visit_Assert(self, node):\n",
    );
    let candidate = OLD.replace("        return self.visit(node)\n", "        return None\n");
    let at = |new: &str| {
        let patch = Patch::parse(&diff("rewrite.py", OLD, new), Path::new("p")).unwrap();
        patch_locations(&patch, |_| Some(OLD.to_owned()), |_| Some(new.to_owned()))
    };
    assert!(any_overlap(&at(&reference), &at(&candidate)));
    let elsewhere = OLD.replace("    return 1\n", "    return 0\n");
    assert!(!any_overlap(&at(&reference), &at(&elsewhere)));
}
