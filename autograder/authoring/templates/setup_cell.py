# The course package `helpers`: installed on Colab (Colab's torch kept), checked elsewhere.
import importlib, importlib.metadata as md, os, subprocess, sys, tempfile
KIT_VERSION = "0.1.0"
KIT_URL = "https://raw.githubusercontent.com/course-kit/rl-for-llms-release/main"
KIT = f"course-kit-helpers @ {KIT_URL}/dist/course_kit_helpers-{KIT_VERSION}-py3-none-any.whl"
_name = _version = None
for _n in ("course-kit", "course-kit-helpers"):  # the kit's repository, then the wheel
    try:
        _name, _version = _n, md.version(_n)
    except md.PackageNotFoundError:
        pass
if _version == KIT_VERSION:
    print(f"course kit: {_name} {_version} is installed")
elif "google.colab" in sys.modules:
    _gpu = os.path.exists("/dev/nvidia0") or os.environ.get("COLAB_GPU", "0") not in ("", "0")
    _want = KIT.replace(" @ ", "[gpu] @ ", 1) if _gpu else KIT  # the 4-bit models need bitsandbytes
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as _pins:
        _pins.write(f"torch=={md.version('torch')}\n")  # pip may add packages, never swap torch
    _pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-c", _pins.name, _want], capture_output=True, text=True)
    if _pip.returncode:
        raise RuntimeError(f"course kit: pip could not install {_want}: {_pip.stderr.strip()[-300:]}")
    importlib.invalidate_caches()
    print(f"course kit: installed course-kit-helpers {md.version('course-kit-helpers')}"
          f"{' with the GPU extras' if _gpu else ''} from {KIT_URL} (torch {md.version('torch')} untouched)")
else:
    _have = f"{_name} {_version} is installed" if _version else "it is not installed"
    print(f"course kit: this notebook needs course-kit-helpers {KIT_VERSION} and {_have} in {sys.executable}: "
          f'run  pip install "{KIT}"  in that environment (the README says how, with a CPU torch), restart the kernel, run this cell again')
