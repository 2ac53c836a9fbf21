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

#[test]
fn the_functions_of_a_new_file_are_located_by_the_file() {
    // astropy-13398's reference adds `itrs_observed_transforms.py` with its functions and
    // registers it in `__init__.py`: the new file's functions exist nowhere in the original,
    // so the file is the location, and a candidate creating the same file overlaps it.
    let text =
        "def add_refraction(aa):\n    return aa\n\n\ndef remove_refraction(aa):\n    return aa\n";
    let created = |body: &str| {
        let lines: String = body.lines().map(|l| format!("+{l}\n")).collect();
        let n = body.lines().count();
        format!(
            "diff --git a/frames/obs.py b/frames/obs.py\nnew file mode 100644\n--- /dev/null\n+++ b/frames/obs.py\n@@ -0,0 +1,{n} @@\n{lines}"
        )
    };
    let reg = diff(
        "frames/__init__.py",
        "from . import icrs\n",
        "from . import icrs\nfrom . import obs\n",
    );
    let at = |new_file: &str| {
        let text = format!("{}{reg}", created(new_file));
        let patch = Patch::parse(&text, Path::new("p")).unwrap();
        let new_file = new_file.to_owned();
        patch_locations(
            &patch,
            |p| (p == "frames/__init__.py").then(|| "from . import icrs\n".to_owned()),
            move |p| match p {
                "frames/obs.py" => Some(new_file.clone()),
                _ => Some("from . import icrs\nfrom . import obs\n".to_owned()),
            },
        )
    };
    let reference = at(text);
    let in_new: Vec<String> = reference
        .iter()
        .filter(|l| l.file.as_str() == "frames/obs.py")
        .map(|l| l.to_string())
        .collect();
    assert_eq!(in_new, ["frames/obs.py (new)"], "{reference:?}");
    let candidate = at("def add_refraction(aa):\n    return aa * 2\n");
    assert!(any_overlap(&reference, &candidate));
}
