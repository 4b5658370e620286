"""``primerscope gui [--demo] [--screenshot FILE.png]``: start the desktop application."""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import sys
import tempfile
from pathlib import Path

from engine import registry

from app import demo

SCREENSHOT_TIMEOUT_S = 300
SCREENSHOT_SIZE = (1280, 720)

#: What Qt's xcb platform plugin loads (PySide6 6.11), and the Debian/Ubuntu packages that hold them.
XCB_LIBRARIES = {
    "libxcb-cursor.so.0": "libxcb-cursor0", "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1", "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0", "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0", "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1", "libxcb-sync.so.1": "libxcb-sync1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0", "libX11-xcb.so.1": "libx11-xcb1",
    "libEGL.so.1": "libegl1", "libfontconfig.so.1": "libfontconfig1", "libdbus-1.so.3": "libdbus-1-3",
}
HEADLESS = ("run it headless with QT_QPA_PLATFORM=offscreen (e.g. QT_QPA_PLATFORM=offscreen "
            "primerscope gui --screenshot out.png), or under xvfb-run")


def display_problem(environ=os.environ) -> str | None:
    """Why Qt could not open a window here, or None. Qt aborts the process (no exception)
    when its platform plugin cannot start, so this is checked before."""
    if not sys.platform.startswith("linux"):
        return None
    platform = environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None  # offscreen, wayland, vnc...: the user's choice
    if not platform and environ.get("WAYLAND_DISPLAY"):
        return None  # Qt picks its Wayland plugin
    display = environ.get("DISPLAY", "")
    if not display:
        return f"no display to open a window on (DISPLAY is not set); {HEADLESS}"
    missing = []
    for library, package in XCB_LIBRARIES.items():
        try:
            ctypes.CDLL(library)
        except OSError:
            missing.append(package)
    if missing:
        return (f"Qt's X11 (xcb) plugin needs libraries this system lacks; install them "
                f"(Debian/Ubuntu: apt-get install {' '.join(missing)}), or {HEADLESS}")
    local = re.fullmatch(r":(\d+)(\.\d+)?", display)
    if local and not os.path.exists(f"/tmp/.X11-unix/X{local.group(1)}"):
        return f"no X server on display {display}; {HEADLESS}"
    return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="primerscope gui", description="The primerscope desktop application.")
    parser.add_argument("--demo", action="store_true", help="load the demo data of the family on start")
    parser.add_argument("--screenshot", metavar="FILE.png",
                        help="run the demo job, save the main window as a PNG and exit")
    parser.add_argument("--family", choices=[f.name for f in registry.families()],
                        help="start with this family (default: the last one used)")
    parser.add_argument("--dataset", choices=list(demo.DATASETS),
                        help="demo data set for --demo/--screenshot (default: the family's own)")
    parser.add_argument("--tab", type=int, default=None,
                        help="view tab shown in the screenshot (0-based; default: the first, or the "
                             "view a demo runs, e.g. Pairs)")
    return parser


class ScreenshotRun:
    """Load the demo, run it, select the most interesting result, save a PNG, quit.

    A demo that runs a view's own job (the pairs demo) is not run again: the window started
    it; the picture waits for that view."""

    def __init__(self, window, path: str, dataset: str, tab: int | None):
        from PySide6.QtCore import QTimer

        self.window, self.path, self.dataset, self.tab = window, path, dataset, tab
        self.status = 1
        self.errors: list[str] = []
        window.error_sink = self._on_error
        window.ask_sink = lambda title, text: True  # a long demo run goes ahead
        window.inputs_loaded.connect(self._on_loaded)
        window.run_finished.connect(self._on_finished)
        window.run_failed.connect(lambda message: self._quit(1))
        self._poll = QTimer()
        self._poll.setInterval(100)
        self._poll.timeout.connect(self._check_views)
        self._waited = 0
        QTimer.singleShot(SCREENSHOT_TIMEOUT_S * 1000, lambda: self._fail("timed out"))

    def start(self) -> None:
        self.window.load_demo(self.dataset)

    def _on_error(self, title: str, text: str, details: str) -> None:
        self.errors.append(f"{title}: {text}")
        print(f"primerscope: error: {title}: {text}", file=sys.stderr)
        self._quit(1)

    def _demo_view(self):
        return self.window.view_titled(self.window.adapter.demo_view(self.dataset))

    def _on_loaded(self) -> None:
        if self._demo_view() is not None:
            self._poll.start()
            return
        controller = self.window.controller
        if controller.mode == "idle" and controller.result is None and not self.window.loads.running:
            controller.run()

    def _on_finished(self, result) -> None:
        self.window.select_best()
        self._poll.start()

    def _check_views(self) -> None:
        from PySide6.QtCore import QTimer

        self._waited += 1
        view = self._demo_view()
        views = [view] if view is not None else self.window.family_views
        if all(v.has_data() for v in views) or self._waited > 600:
            self._poll.stop()
            if self.tab is not None or view is None:
                self.window.tabs.setCurrentIndex(min(self.tab or 0, self.window.tabs.count() - 1))
            QTimer.singleShot(400, self._grab)

    def _grab(self) -> None:
        pixmap = self.window.grab()
        if not pixmap.save(self.path):
            self._fail(f"cannot write {self.path}")
            return
        print(f"primerscope: screenshot saved to {self.path}", file=sys.stderr)
        self._quit(0)

    def _fail(self, why: str) -> None:
        print(f"primerscope: screenshot failed: {why}", file=sys.stderr)
        self._quit(1)

    def _quit(self, status: int) -> None:
        from PySide6.QtWidgets import QApplication

        self.status = status
        self.window.close()
        QApplication.instance().exit(status)


SCREENSHOT_FORMATS = (".png", ".jpg", ".jpeg", ".bmp")


#: What Qt's offscreen platform says about window features it lacks: true, and nothing a
#: user of --screenshot can act on.
OFFSCREEN_NOISE = ("This plugin does not support",)


def quiet_offscreen_noise() -> None:
    """Drop the offscreen platform's notes about missing window features (printed several
    times per run); every other Qt message still goes to stderr, once per text."""
    from PySide6.QtCore import qInstallMessageHandler

    seen: set[str] = set()

    def handler(kind, context, message: str) -> None:
        if message.startswith(OFFSCREEN_NOISE) or message in seen:
            return
        seen.add(message)
        print(message, file=sys.stderr)

    qInstallMessageHandler(handler)


def check_screenshot_path(path: str) -> None:
    """Refuse a screenshot path that cannot be written before the demo runs (ValueError)."""
    from engine.output import check_outputs

    if os.path.splitext(path)[1].lower() not in SCREENSHOT_FORMATS:
        raise ValueError(f"{path}: a screenshot is saved as {', '.join(SCREENSHOT_FORMATS)}; "
                         "name the file with one of these suffixes")
    check_outputs([path])


def main(argv=None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.screenshot:
        try:
            check_screenshot_path(args.screenshot)
        except ValueError as exc:
            print(f"primerscope: error: {exc}", file=sys.stderr)
            return 2
    problem = display_problem()
    if problem:
        print(f"primerscope: cannot open a window: {problem}.", file=sys.stderr)
        return 2
    from PySide6.QtCore import QSettings

    from app.families import adapter, has_adapter
    from app.window import MainWindow, application

    if args.screenshot:
        quiet_offscreen_noise()
    qt_app = application()
    if args.screenshot:
        # A screenshot shows the defaults, not this user's settings (and leaves them alone).
        settings_dir = tempfile.TemporaryDirectory(prefix="primerscope-")
        settings = QSettings(str(Path(settings_dir.name) / "settings.ini"), QSettings.Format.IniFormat)
    else:
        settings = QSettings("primerscope", "primerscope")
    window = MainWindow(settings, restore=not args.screenshot)
    if args.family:
        if not has_adapter(args.family):
            print(f"primerscope: error: the GUI has no views for {args.family} yet", file=sys.stderr)
            return 2
        window.params.set_family(args.family)
    dataset = args.dataset or adapter(window.params.family).default_demo
    if args.screenshot:
        window.resize(*SCREENSHOT_SIZE)
        window.show()
        shot = ScreenshotRun(window, args.screenshot, dataset, args.tab)
        shot.start()
        status = qt_app.exec()
        return status if status else shot.status
    window.show()
    window.start_warmup()  # compile the shown page's kernels ahead (first use: tens of seconds)
    if args.demo:
        window.load_start_demo(dataset)
    return qt_app.exec()
