"""python -m autograder: generate releases, build the student release, autograde submissions, run the demo."""
from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path

from autograder.manifest import PROFILES, REPO_ROOT, load_assignments
from autograder.outcome import Request, positive


def _offline_defaults() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def cmd_generate(args) -> int:
    from autograder.authoring.course import generate

    root = Path(args.course_root)
    assignments = load_assignments(root, args.ids or None)
    if not assignments:
        print(f"error: no assignments under {root / 'solutions'}", file=sys.stderr)
        return 2
    from autograder.authoring.release import ReleaseError

    try:
        stale = generate(assignments, root / "notebooks", check=args.check)
    except ReleaseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stale += write_public_settings(root, check=args.check)
    try:
        stale += expected_values(assignments, check=args.check, force=args.force)
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.check:
        for line in stale:
            print(f"stale: {line}", file=sys.stderr)
        if stale:
            print("run `python -m autograder generate` and commit notebooks/ and solutions/*/tests/expected.json",
                  file=sys.stderr)
            return 1
        print(f"releases and expected values up to date: {', '.join(a.id for a in assignments)}")
    else:
        for line in stale:  # what generate cannot rewrite: a heading's own number, written by hand
            print(f"fix by hand: {line}", file=sys.stderr)
        print(f"generated: {', '.join(str(root / 'notebooks' / a.id) for a in assignments)}")
    return 0


def expected_values(assignments, check: bool, force: bool = False) -> list[str]:
    """The hidden tests' expected values: re-recorded from each solution where stale (or ``force``)."""
    from autograder.authoring import expected

    stale = []
    for assignment in assignments:
        if not assignment.tests_dir.is_dir():
            continue
        why = None if force else expected.stale(assignment)
        if check:
            stale += [why] if why else []
        elif force or why:
            print(f"recording the expected values of {assignment.id} from its solution ...", file=sys.stderr)
            print(f"expected values: {expected.write(assignment)}")
    return stale


def write_public_settings(root: Path, check: bool) -> list[str]:
    """helpers/data/grading.json from every manifest (what students may see: tiers, limits)."""
    from autograder.manifest import PUBLIC_SETTINGS, load_assignments, render_public_settings

    if Path(root).resolve() != PUBLIC_SETTINGS.parents[2]:
        return []  # another course root (a test fixture): the kit's own file is not its business
    text = render_public_settings(load_assignments(root))
    if check:
        current = PUBLIC_SETTINGS.read_text() if PUBLIC_SETTINGS.exists() else ""
        return [] if current == text else [f"{PUBLIC_SETTINGS} differs from what the manifests give"]
    PUBLIC_SETTINGS.write_text(text)
    return []


def cmd_new(args) -> int:
    from autograder.authoring.scaffold import ScaffoldError, scaffold

    try:
        paths = scaffold(Path(args.course_root), args.id)
    except ScaffoldError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in paths:
        print(f"wrote {path}")
    print(f"next: write the reference answer and the hidden test, then `python -m autograder generate {args.id}` "
          "(docs/AUTHORING.md: Adding an assignment)")
    return 0


def cmd_release(args) -> int:
    from autograder.authoring.release import ReleaseError, release

    root = Path(args.course_root)
    try:
        assignments = load_assignments(root, args.ids or None)
        report = release(assignments, Path(args.out), root=root, url=args.install_url)
    except ReleaseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in report.lines():
        print(line)
    if args.install_url is not None:
        print("note: --install-url differs from course.toml only for this build; the grader rebuilds the install "
              "cell from course.toml, so set it there too before grading", file=sys.stderr)
    return 0


def cmd_autograde(args) -> int:
    from autograder.grading.batch import autograde
    from autograder.isolation.host_isolation import SandboxError
    from autograder.outcome import SubmissionLayoutError
    from autograder.reports.feedback import format_table

    assignments = load_assignments(Path(args.course_root), args.assignment or None)
    try:
        request = Request.from_args(args)
        extensions = request.extensions
        results = autograde(Path(args.submissions), Path(args.out), assignments, request,
                            log=lambda line: print(line, file=sys.stderr, flush=True))
    except (SubmissionLayoutError, SandboxError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_table(results))
    print(f"\ngrades: {Path(args.out) / 'grades.csv'}   feedback: {Path(args.out) / 'feedback'}")
    unknown = sorted(set(extensions) - {r.student for r in results})
    if unknown:
        print(f"warning: --extensions names students with no submission here: {', '.join(unknown)}", file=sys.stderr)
    written = any(r.manual_max for r in results)
    print("next: " + (f"grade the written answers in formgrader (`python -m autograder formgrader {args.out}`), then "
                      f"`python -m autograder grades {args.out}`" if written else
                      f"`python -m autograder grades {args.out}`, then `return` and `stats`"))
    return 0


def cmd_grades(args) -> int:
    from autograder.reports.feedback import format_table
    from autograder.reports.grades import regenerate

    try:
        done = regenerate(Path(args.out), log=lambda line: print(line, file=sys.stderr))
    except (ValueError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_table(done.results, done.open))
    with_written = [r for r in done.results if r.manual_max]
    complete = sum(1 for r in with_written if r.manual_score is not None)
    print(f"\nwritten answers: {complete} of {len(with_written)} submissions complete, {len(done.open)} still to grade"
          + (":" if done.open else ""))
    for (student, assignment), cells in sorted(done.open.items()):
        print(f"  {student}/{assignment}: {', '.join(cells)}")
    if done.open:
        print(f"grade them in formgrader (`python -m autograder formgrader {args.out}`), then run this again; until "
              "then their LMS points are the autograded points only")
    for line in done.disagreements:
        print(f"warning: the gradebook's total differs: {line}", file=sys.stderr)
    print(f"grades: {Path(args.out) / 'grades.csv'}   LMS file: {Path(args.out) / 'lms_grades.csv'}   "
          f"feedback: {Path(args.out) / 'feedback'}")
    if args.canvas_gradebook:
        from autograder.reports.canvas_gradebook import fill

        try:
            filled = fill(Path(args.out), Path(args.canvas_gradebook), args.canvas_column)
        except (OSError, ValueError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        columns = ", ".join(f"{a} -> {c!r}" for a, c in filled.columns.items()) or "none"
        print(f"Canvas import: {filled.path} (columns filled: {columns})")
        for line in filled.unmatched:
            print(f"  not matched: {line}", file=sys.stderr)
    print(f"next: `python -m autograder return {args.out}` (feedback back through the LMS) and "
          f"`python -m autograder stats {args.out}` (which test cells students fail)")
    return 0


def cmd_calibrate(args) -> int:
    from autograder.calibrate import CalibrationSettings, calibrate, summary_lines

    assignments = load_assignments(Path(args.course_root), args.assignment or None)
    from helpers import profiles

    profile = profiles.resolve(args.profile, profiles.cuda_available)
    skipped = [a.id for a in assignments if not a.runs_in(profile)]
    if skipped:
        print(f"calibrate: {', '.join(skipped)} has no {profile} profile; left out", file=sys.stderr)
    chosen = [a for a in assignments if a.needs_gpu.get("full") and a.robustness is not None and a.runs_in(profile)]
    if not chosen:
        named = ", ".join(a.id for a in assignments)
        print(f"error: nothing to calibrate among {named}: calibrate runs the assignments that need a GPU in the "
              "full profile and name their training in the manifest (robustness)", file=sys.stderr)
        return 2
    record = calibrate(chosen, CalibrationSettings(out=Path(args.out), profile=profile))
    print("\n".join(summary_lines(record)))
    print(f"record: {Path(args.out) / 'calibration.json'}\npage: {Path(args.out) / 'calibration.html'}")
    return 1 if any(run["error"] for run in record["assignments"].values()) else 0


def _graded_out(out: str, command: str) -> bool:
    """Whether OUT is a folder `autograde` wrote; else one line saying what to run first."""
    from autograder.reports.grades import check_out

    try:
        check_out(Path(out), command)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return False
    return True


def cmd_return(args) -> int:
    from autograder.reports.lms_return import write_returns

    if not _graded_out(args.out, "return"):
        return 2
    done = write_returns(Path(args.out))
    for path in done.zips:
        print(f"return ZIP: {path}")
    for line in done.lines:
        print(line, file=sys.stderr)
    if not done.zips:
        print("no return ZIP written: no submission came through a Canvas or Moodle collect", file=sys.stderr)
    return 0


def cmd_stats(args) -> int:
    from autograder.reports import stats

    if not _graded_out(args.out, "stats"):
        return 2
    pages = stats.write(Path(args.out))
    if not pages:
        print(f"error: no graded submission in {args.out}: run `python -m autograder autograde` first", file=sys.stderr)
        return 2
    for assignment, (page, flagged) in pages.items():
        check = f" (check these tests: {', '.join(flagged)})" if flagged else ""
        print(f"statistics of {assignment}: {page}{check}")
    return 0


def cmd_similarity(args) -> int:
    from autograder.reports.similarity import report

    if not _graded_out(args.out, "similarity"):
        return 2
    out = Path(args.out)
    graded = sorted({p.name for p in out.glob("submitted/*/*") if p.is_dir()})
    wanted = args.assignment or graded
    unknown = [a for a in wanted if a not in graded]
    if unknown:
        print(f"error: {', '.join(unknown)} not graded in {out} (graded: {', '.join(graded) or 'none'})",
              file=sys.stderr)
        return 2
    for assignment in wanted:
        index = report(out, assignment, reference=out / "source" / assignment / f"{assignment}.ipynb",
                       pages=args.pages)
        print(f"similarity of {assignment}: {index}")
        with open(index.parent / "similarity.csv", newline="") as handle:
            top = list(csv.DictReader(handle))[:5]
        for row in top:  # the pairs worth a look first (the page shows the matched regions)
            print(f"  {float(row['share']):6.1%} shared  {row['student']} ~ {row['other']}  ({row['tokens']} tokens)")
    return 0


def cmd_formgrader(args) -> int:
    from autograder.reports.formgrader import serve

    try:
        return serve(Path(args.out), port=args.port, ip=args.ip)
    except (ValueError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def cmd_collect(args) -> int:
    from autograder.intake.lms import collect

    load_assignments(Path(args.course_root), [args.assignment])  # a typo stops here, before anything is written
    fresh = not Path(args.out).exists()
    try:
        report = collect(Path(args.download), args.assignment, Path(args.out), max_mb=args.max_mb)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in report.lines():
        print(line)
    if report.students:
        print(f"\nsubmissions: {args.out}   report: {Path(args.out) / '_collect_report.json'}")
    else:
        if fresh and [p.name for p in Path(args.out).iterdir()] == ["_collect_report.json"]:
            import shutil

            shutil.rmtree(args.out)  # nothing collected: leave no folder behind
        print(f"error: no submission found in {args.download}: is it the LMS's download of {args.assignment}'s "
              "submissions? (the lines above say what was found instead)", file=sys.stderr)
        return 1
    return 0


def cmd_references(args) -> int:
    from autograder.authoring.references import build

    assignments = load_assignments(Path(args.course_root), args.assignment or None)
    for page in build(assignments, Path(args.out)):
        print(f"reference output: {page}")
    return 0


def cmd_demo(args) -> int:
    from autograder.demo import demo, demo_table

    assignments = load_assignments(Path(args.course_root), args.assignment or None)
    results, surprises = demo(assignments, Path(args.out), workers=args.workers, execute_all=args.execute_all)
    from autograder.authoring.references import write_pages_from

    pages = write_pages_from(Path(args.out) / "submissions", [a.id for a in assignments], Path(args.out))
    if pages:
        print(f"reference outputs for graders: {Path(args.out) / 'reference_outputs'} "
              f"({len(pages)} executed notebooks)")
    print()
    print(demo_table(results, assignments))
    print(f"\ngrades: {Path(args.out) / 'grades.csv'}   feedback: {Path(args.out) / 'feedback'}")
    for line in surprises:
        print(f"unexpected: {line}", file=sys.stderr)
    return 1 if surprises and args.strict else 0


def _authoring_commands(sub) -> None:
    p = sub.add_parser("generate", help="regenerate notebooks/ (student releases) from solutions/")
    p.add_argument("ids", nargs="*", help="assignment ids (default: all)")
    p.add_argument("--check", action="store_true", help="exit 1 naming each release or expected-values file that "
                   "is out of date")
    p.add_argument("--force", action="store_true", help="record the hidden tests' expected values again even "
                   "where nothing they derive from changed")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("new", help="scaffold solutions/ID/: a notebook with one TODO, its hidden test, a manifest")
    p.add_argument("id", help="the new assignment's id (lowercase letters, digits, _)")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser("release", help="what students get: release notebooks, a wheel of helpers, a README")
    p.add_argument("ids", nargs="*", help="assignment ids (default: all)")
    p.add_argument("--out", required=True, help="folder to write (only files an earlier release wrote there are "
                   "replaced); publish it at the install URL")
    p.add_argument("--install-url", help="URL the release is published at, for this build only "
                   "(default: [release] install_url in course.toml)")
    p.set_defaults(func=cmd_release)


def _grading_commands(sub) -> None:
    p = sub.add_parser("autograde", help="grade SUBMISSIONS/<student>/<assignment>/ into OUT")
    p.add_argument("submissions")
    p.add_argument("--out", required=True)
    p.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    Request.add_arguments(p)  # each option's help is its field's in autograder/outcome.Request
    p.set_defaults(func=cmd_autograde)


def _report_commands(sub) -> None:
    p = sub.add_parser("grades", help="after grading written answers in formgrader: grades.csv, lms_grades.csv "
                       "and feedback pages with the written scores, comments and late penalties; lists what is "
                       "still to grade")
    p.add_argument("out", help="the OUT folder of an earlier `autograde`")
    p.add_argument("--canvas-gradebook", metavar="EXPORT.csv", help="your Canvas gradebook export: writes "
                   "OUT/canvas_gradebook_import.csv, that file with each assignment's column filled from our totals "
                   "(rows matched by Canvas user id), ready for Canvas's gradebook import")
    p.add_argument("--canvas-column", help="the export's column to fill (default: the one whose header holds the "
                   "assignment id)")
    p.set_defaults(func=cmd_grades)

    p = sub.add_parser("return", help="feedback back through the LMS: OUT/return/<assignment>-<lms>.zip, what "
                       "Canvas's Re-Upload Submissions or Moodle's feedback-files upload takes in one go")
    p.add_argument("out", help="the OUT folder of an earlier `autograde`")
    p.set_defaults(func=cmd_return)

    p = sub.add_parser("stats", help="per-question statistics: score histogram, pass rate per graded cell, grouped "
                       "failure messages, and the test cells that strong submissions fail (check those tests)")
    p.add_argument("out", help="the OUT folder of an earlier `autograde`")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("similarity", help="pairs of submissions ranked by the answer code they share (copydetect), "
                       "a page per pair with the matched regions (staff only)")
    p.add_argument("out", help="the OUT folder of an earlier `autograde`")
    p.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    p.add_argument("--pages", type=positive, default=50, help="pages of matched regions for the top pairs (default 50)")
    p.set_defaults(func=cmd_similarity)

    p = sub.add_parser("calibrate", help="run each GPU assignment's reference recipe here, as a student's notebook "
                       "runs it: seconds per step, minutes, peak memory, and the tiers the reference reaches "
                       "(calibration.json and calibration.html in --out)")
    p.add_argument("--out", required=True, help="folder for the runs, the record and the page")
    p.add_argument("--profile", choices=("auto", *PROFILES), default="auto",
                   help="profile to run in (default auto: full where a CUDA GPU is, else tiny; small: the real "
                        "SmolLM2-135M on this CPU, tens of minutes per assignment)")
    p.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("formgrader", help="nbgrader's formgrader on an OUT folder, to grade the written answers "
                       "(prints the URL to open; Ctrl-C stops it)")
    p.add_argument("out", help="the OUT folder of an earlier `autograde`")
    p.add_argument("--port", type=int, default=8888, help="port to listen on (default 8888, the next free one if "
                   "taken; 0: any free port)")
    p.add_argument("--ip", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.set_defaults(func=cmd_formgrader)


def _intake_and_demo_commands(sub) -> None:
    p = sub.add_parser("collect", help="sort an LMS download (Canvas, Moodle, Gradescope, plain) into "
                       "<student>/<assignment>/")
    p.add_argument("download", help="the ZIP file (or extracted folder) from the LMS")
    p.add_argument("--assignment", required=True, help="assignment id the files belong to")
    p.add_argument("--out", required=True, help="folder to write <student>/<assignment>/ into")
    p.add_argument("--max-mb", type=positive, default=None,
                   help="largest uncompressed size of the download and of each student's files (default 4096 / 1024)")
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("references", help="the executed reference of every notebook (tiny profile) as HTML, "
                                          "for the people grading written answers (staff only)")
    p.add_argument("--out", required=True, help="the grading folder: pages go to OUT/reference_outputs/<id>/")
    p.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    p.set_defaults(func=cmd_references)

    p = sub.add_parser("demo", help="release, sample submissions, autograde (tiny profile), grade table")
    p.add_argument("--out", default="demo-output")
    p.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    p.add_argument("--workers", type=positive, default=min(os.cpu_count() or 1, 4),
                   help="submissions graded at once (default: one per core, at most 4)")
    p.add_argument("--strict", action="store_true", help="exit 1 when a sample scores other than expected")
    p.add_argument("--execute-all", action="store_true",
                   help="also run the references that produce no artifacts, so `make test` can reuse every "
                        "executed reference (COURSE_KIT_DEMO_OUTPUT=OUT)")
    p.set_defaults(func=cmd_demo)


def main(argv=None) -> int:
    _offline_defaults()
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    parser.add_argument("--course-root", default=str(REPO_ROOT),
                        help="folder holding solutions/ and notebooks/ (default: this repository)")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_authoring_commands, _intake_and_demo_commands, _grading_commands, _report_commands):
        add(sub)
    args = parser.parse_args(argv)
    from autograder.manifest import ManifestError

    try:
        return args.func(args)
    except ManifestError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
