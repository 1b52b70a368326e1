"""A small built-in corpus of three near-identical product manuals, for demos and tests.

Real product lines ship manuals that share almost every sentence and name the model only in
the title (and perhaps once in the specifications). That is exactly the case where plain chunk
embeddings cannot tell the manuals apart and CHOP's chunk context has to pick the right model,
so this corpus reproduces it on purpose: one template, a few per-model values, no downloads.
"""

from __future__ import annotations

from pathlib import Path

SAMPLE_MODELS: tuple[str, ...] = ("Coolwave 225B", "Coolwave 330C", "Coolwave 410X")

# The per-model values. Everything else in a manual comes from the shared template below, so the
# near-duplicate structure is real rather than hand-copied. Each value that a question asks about
# must occur in its own manual only (tests/test_sample_corpus.py checks this).
_MODEL_VALUES: dict[str, dict[str, str]] = {
    "Coolwave 225B": {
        "wifi_button_line": "- WIFI: starts Wi-Fi pairing and shows the connection status.",
        "sleep_noise": "44",
        "filter_interval": "every 2 weeks",
        "filter_type": "washable nylon mesh filter",
        "filter_care": (
            "Rinse the filter under lukewarm water with a little mild detergent, then let it dry"
            " completely in the shade; never dry it in direct sunlight or with a hair dryer."
        ),
        "tank_capacity": "1.2 litres",
        "wifi_band_line": (
            "The unit supports 2.4 GHz networks only; 5 GHz networks are not supported."
        ),
        "wifi_start": (
            "Press and hold the WIFI button for 3 seconds until the Wi-Fi indicator blinks quickly."
        ),
        "e4_line": (
            "- E4: Fan motor fault. Switch the unit off and contact an authorised service centre."
        ),
        "reset_keys": "MODE and FAN",
        "reset_seconds": "3",
        "btu": "8,000",
        "kw": "2.3",
        "room": "15",
        "power": "900",
        "dehumidification": "20",
        "noise": "52",
        "wifi_band_short": "2.4 GHz",
        "dimensions": "320 x 310 x 680",
        "weight": "24",
    },
    "Coolwave 330C": {
        "wifi_button_line": (
            "- There is no separate Wi-Fi button; pairing is started with the TIMER button."
        ),
        "sleep_noise": "41",
        "filter_interval": "every 4 weeks",
        "filter_type": "activated carbon filter",
        "filter_care": (
            "Remove loose dust from the filter with a vacuum cleaner on low suction; do not wash"
            " it, because water ruins the carbon layer. Replace the carbon filter every 6 months."
        ),
        "tank_capacity": "1.8 litres",
        "wifi_band_line": (
            "The unit supports 2.4 GHz networks only; 5 GHz networks are not supported."
        ),
        "wifi_start": (
            "Press and hold the TIMER button for 5 seconds until the Wi-Fi indicator blinks"
            " quickly."
        ),
        "e4_line": "- E4: Room temperature sensor fault. Contact an authorised service centre.",
        "reset_keys": "TIMER and SLEEP",
        "reset_seconds": "5",
        "btu": "10,000",
        "kw": "2.9",
        "room": "20",
        "power": "1,050",
        "dehumidification": "24",
        "noise": "49",
        "wifi_band_short": "2.4 GHz",
        "dimensions": "340 x 330 x 710",
        "weight": "27",
    },
    "Coolwave 410X": {
        "wifi_button_line": (
            "- PAIR (on the rear panel, next to the power cord): starts Wi-Fi pairing."
        ),
        "sleep_noise": "38",
        "filter_interval": "every 6 weeks",
        "filter_type": "pleated HEPA filter",
        "filter_care": (
            "Clean the filter surface gently with a vacuum cleaner on low suction; do not wash or"
            " brush it, because this damages the fibres. Replace the HEPA filter every 12 months."
        ),
        "tank_capacity": "2.5 litres",
        "wifi_band_line": "The unit supports both 2.4 GHz and 5 GHz networks.",
        "wifi_start": (
            "Press the PAIR button on the rear panel once with a pen tip; the Wi-Fi indicator"
            " blinks quickly."
        ),
        "e4_line": (
            "- E4: Compressor overheat protection. Switch the unit off, let it cool for 30 minutes"
            " and make sure the air inlet is not blocked."
        ),
        "reset_keys": "POWER and MODE",
        "reset_seconds": "5",
        "btu": "12,000",
        "kw": "3.5",
        "room": "28",
        "power": "1,250",
        "dehumidification": "30",
        "noise": "46",
        "wifi_band_short": "2.4 GHz and 5 GHz",
        "dimensions": "360 x 350 x 740",
        "weight": "31",
    },
}

# One sentence per line (valid Markdown: lines of a paragraph are joined), so near-identical
# manuals differ only in the few lines that carry a per-model value.
_TEMPLATE = """\
# {name} User Manual

Thank you for choosing a Coolwave portable air conditioner.
Read this manual carefully before first use and keep it for future reference.

## Safety instructions

Always connect the unit to a properly earthed 220-240 V socket that is protected by a 10 A fuse.
Do not use an extension cord or a multi-socket adapter, because they can overheat.
Keep the unit upright; if it has been laid on its side, wait 2 hours before switching it on.
Do not operate the unit in a bathroom, a laundry room or any other wet place.
Leave at least 30 cm of free space around the air inlet and the air outlet.
Unplug the unit before cleaning, before draining the water tank and whenever it will not be used \
for a long time.
Children must not play with the unit, and cleaning must not be done by children without \
supervision.
If the power cord is damaged, it must be replaced by an authorised service centre to avoid a \
hazard.
The unit contains R290 refrigerant, which is flammable; do not pierce or burn the refrigerant \
circuit.

## Unpacking and installation

Remove all packing material, including the foam blocks inside the air outlet.
Check that the carton contains the unit, the exhaust hose, the window kit, the remote control \
with two AAA batteries and this manual.
Place the unit on a flat, stable floor close to a window and a wall socket.
Screw the exhaust hose onto the rear of the unit by turning it clockwise until it clicks.
Extend the window slider to the width of your window opening and fit the other end of the hose \
into the slider.
Keep the exhaust hose as short and as straight as possible; do not extend it, because a longer \
hose reduces cooling performance.
After installation, wait 2 hours before the first start so that the refrigerant can settle.
Insert the batteries into the remote control, observing the polarity marks.

## Control panel

The control panel on the top of the unit has a display and the following buttons.

- POWER: switches the unit on or off.
- MODE: selects Cool, Dry, Fan or Auto mode.
- FAN: selects Low, Medium or High fan speed.
- UP and DOWN: set the target temperature from 16 to 32 degrees C, or the timer hours.
- TIMER: sets a delayed start or stop of 1 to 24 hours.
- SLEEP: switches Sleep mode on or off.
{wifi_button_line}

The display shows the target temperature during normal operation and the remaining timer hours \
while the timer is set.
The panel locks automatically after 60 seconds without use; touch any button for 3 seconds to \
unlock it.

## Operating modes

Cool mode lowers the room temperature to the set target; the compressor starts and stops \
automatically to hold it.
Dry mode removes moisture from the air at low fan speed; the target temperature cannot be \
changed in this mode.
Fan mode only circulates air, without cooling, and the exhaust hose does not need to be fitted.
Auto mode chooses Cool or Fan mode by itself, based on the room temperature.
Sleep mode raises the target temperature by 1 degree after the first hour and by another degree \
after the second hour, for a quieter and more economical night.
In Sleep mode the fan runs at low speed and the noise level drops to about {sleep_noise} dB(A).
The compressor has a 3-minute restart delay to protect it; this is normal and not a fault.

## Cleaning the air filter

Clean the air filter {filter_interval}, or more often in dusty rooms or if you have pets.
This unit uses a {filter_type}, which sits behind the grille on the rear of the unit.
Switch the unit off and unplug it.
Pull the filter grille upward and out of its guides, then lift the filter out of the grille.
{filter_care}
Never operate the unit without the filter, because dust would clog the evaporator.
Slide the grille back into its guides until it clicks.
The filter icon on the display lights up when cleaning is due; press and hold SLEEP for \
3 seconds to clear it.

## Draining the water tank

In Cool and Fan mode, most of the condensed water is evaporated and blown out through the \
exhaust hose, so the tank rarely fills.
In Dry mode and in very humid weather, water collects in the internal tank, which holds \
{tank_capacity}.
When the tank is full, the display shows FL, the compressor stops and the unit beeps 8 times.
To drain it, switch the unit off, unplug it and place a shallow tray under the drain plug at the \
bottom of the rear panel.
Unscrew the drain cap, pull out the rubber plug and let the water run out.
Refit the rubber plug and the cap firmly, then restart the unit.
For continuous drainage in Dry mode, connect a 14 mm garden hose to the drain outlet and lead \
it to a lower floor drain.

## Wi-Fi pairing

The unit can be controlled with the free Coolwave Home app for Android and iOS.
Install the app and create an account.
{wifi_band_line}
Switch the unit on and place your phone within 3 metres of it.
{wifi_start}
In the app, tap Add device, choose Portable air conditioner and follow the instructions on the \
screen.
When the indicator stays lit, pairing is complete.
If pairing fails within 3 minutes, the indicator goes out; check the network password and repeat \
the steps.

## Troubleshooting and error codes

If the unit does not start, check that the plug is fully inserted and that the fuse has not blown.
If the cooling is weak, clean the air filter, shorten the exhaust hose and close doors and windows.
The display shows the following error codes.

- E1: Evaporator sensor fault. Contact an authorised service centre.
- E2: Condenser sensor fault. Contact an authorised service centre.
- E3: Communication error between the control panel and the main board. Unplug the unit for \
5 minutes, then restart it.
{e4_line}
- FL: Water tank full. Drain the tank as described above.

To restore the factory settings, press and hold {reset_keys} together for {reset_seconds} \
seconds until the unit beeps twice.
A factory reset also clears the Wi-Fi settings and the timer.
If an error code returns after a reset, contact an authorised service centre.

## Specifications

- Model: {name}
- Cooling capacity: {btu} BTU/h ({kw} kW)
- Suitable room size: up to {room} square metres
- Power supply: 220-240 V, 50 Hz
- Rated power input: {power} W
- Dehumidification: up to {dehumidification} litres per day
- Water tank capacity: {tank_capacity}
- Air filter: {filter_type}
- Noise level: {noise} dB(A) at high fan speed
- Refrigerant: R290
- Wi-Fi: {wifi_band_short}
- Dimensions (W x D x H): {dimensions} mm
- Net weight: {weight} kg

Cooling capacity and power input are measured at 35 degrees C outside and 27 degrees C inside.
The manufacturer reserves the right to change the specifications without notice.
"""

SAMPLE_QUESTIONS: list[dict] = [
    {
        "question": "How often should I clean the air filter on the Coolwave 330C?",
        "model": "Coolwave 330C",
        "expected_phrase": "every 4 weeks",
        "in_corpus": True,
    },
    {
        "question": "How often should I clean the air filter on the Coolwave 410X?",
        "model": "Coolwave 410X",
        "expected_phrase": "every 6 weeks",
        "in_corpus": True,
    },
    {
        "question": "What type of air filter does the Coolwave 225B use?",
        "model": "Coolwave 225B",
        "expected_phrase": "washable nylon mesh filter",
        "in_corpus": True,
    },
    {
        "question": "How do I reset the Coolwave 410X to its factory settings?",
        "model": "Coolwave 410X",
        "expected_phrase": "POWER and MODE",
        "in_corpus": True,
    },
    {
        "question": "How much water does the water tank of the Coolwave 225B hold?",
        "model": "Coolwave 225B",
        "expected_phrase": "1.2 litres",
        "in_corpus": True,
    },
    {
        "question": "What does error code E4 mean on the Coolwave 330C?",
        "model": "Coolwave 330C",
        "expected_phrase": "Room temperature sensor fault",
        "in_corpus": True,
    },
    {
        "question": "How loud is the Coolwave 410X at high fan speed?",
        "model": "Coolwave 410X",
        "expected_phrase": "46 dB",
        "in_corpus": True,
    },
    {
        "question": "How do I start Wi-Fi pairing on the Coolwave 330C?",
        "model": "Coolwave 330C",
        "expected_phrase": "TIMER button for 5 seconds",
        "in_corpus": True,
    },
    {
        "question": "How often should I clean the air filter on the Coolwave 999Z?",
        "model": "Coolwave 999Z",
        "expected_phrase": "",
        "in_corpus": False,
    },
]


def manual_filename(model: str) -> str:
    """File name for a model's manual ("Coolwave 225B" -> "coolwave-225b.md"), stable for tests."""
    return "-".join(model.lower().split()) + ".md"


def render_manual(model: str) -> str:
    """The Markdown text of one model's manual: the shared template filled with its values."""
    if model not in _MODEL_VALUES:
        raise KeyError(f"not a sample model: {model!r} (known: {', '.join(SAMPLE_MODELS)})")
    return _TEMPLATE.format(name=model, **_MODEL_VALUES[model])


def write_sample_corpus(folder: str | Path) -> list[Path]:
    """Write one manual per sample model into folder (created if missing, files overwritten).

    Returns the paths in SAMPLE_MODELS order, so demos and tests can ingest them directly.
    """
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for model in SAMPLE_MODELS:
        path = target / manual_filename(model)
        with path.open("w", encoding="ascii", newline="\n") as handle:
            handle.write(render_manual(model))
        paths.append(path)
    return paths
