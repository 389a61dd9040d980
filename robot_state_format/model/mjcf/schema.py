"""The attributes MuJoCo's XML schema admits on the elements this reader interprets.

Data taken from MuJoCo 4.0's own schema (``mujoco.mj_printSchema``): an attribute not listed here is
refused, as MuJoCo refuses it ("Schema violation: unrecognized attribute"). ``frame`` is not in the
printed schema (MuJoCo parses it apart), its attributes are from the XML reference.
"""

from __future__ import annotations

__all__ = ["BODY_ATTRS", "BODY_CHILDREN", "COMPILER_ATTRS", "DEFAULT_CHILDREN", "FRAME_ATTRS", "TOP_LEVEL"]

# the children <mujoco> admits (mj_printSchema's top level; <worldbody> is parsed apart, <include> expanded;
# a <body> or <frame> straight under <mujoco> is accepted and ignored by MuJoCo 4.0, measured)
TOP_LEVEL: frozenset[str] = frozenset({
        "actuator", "asset", "body", "compiler", "contact", "custom", "default", "deformable", "equality",
        "extension", "frame", "keyframe", "option", "sensor", "size", "statistic", "tendon", "visual", "worldbody",
    })

BODY_ATTRS: frozenset[str] = frozenset({
        "axisangle", "childclass", "euler", "fuse", "gravcomp", "mocap", "name", "pos", "quat", "simple",
        "sleep", "user", "xyaxes", "zaxis",
    })
COMPILER_ATTRS: frozenset[str] = frozenset({
        "alignfree", "angle", "assetdir", "autolimits", "balanceinertia", "boundinertia", "boundmass",
        "conflict", "coordinate", "discardvisual", "eulerseq", "fitaabb", "fusestatic", "inertiafromgeom",
        "inertiagrouprange", "meshdir", "passthrough", "savecanonical", "savecompiled", "saveinertial",
        "settotalmass", "strippath", "texturedir", "usethread",
    })
FRAME_ATTRS: frozenset[str] = frozenset({"name", "childclass", "pos", "quat", "axisangle", "xyaxes", "zaxis", "euler"})
BODY_CHILDREN: dict[str, frozenset[str]] = {
    "inertial": frozenset({
            "axisangle", "diaginertia", "euler", "fullinertia", "mass", "pos", "quat", "xyaxes", "zaxis",
        }),
    "joint": frozenset({
            "actuatorfrclimited", "actuatorfrcrange", "actuatorgravcomp", "armature", "axis", "class", "damping",
            "frictionloss", "group", "limited", "margin", "name", "pos", "range", "ref", "solimpfriction",
            "solimplimit", "solreffriction", "solreflimit", "springdamper", "springref", "springyield", "stiffness",
            "type", "user",
        }),
    "freejoint": frozenset({
            "align", "group", "name",
        }),
    "geom": frozenset({
            "adhesion", "axisangle", "castshadow", "class", "conaffinity", "condim", "contype", "density", "euler",
            "fitscale", "fluidcoef", "fluidshape", "friction", "fromto", "gap", "group", "hfield", "margin", "mass",
            "material", "mesh", "name", "pos", "priority", "quat", "rgba", "shellinertia", "size", "solimp",
            "solmix", "solref", "surfacevel", "type", "user", "xyaxes", "zaxis",
        }),
    "attach": frozenset({
            "body", "frame", "model", "prefix",
        }),
    "site": frozenset({
            "axisangle", "class", "euler", "fromto", "group", "material", "mesh", "name", "pos", "quat", "rgba",
            "size", "type", "user", "xyaxes", "zaxis",
        }),
    "camera": frozenset({
            "axisangle", "class", "euler", "focal", "focalpixel", "fovy", "ipd", "mode", "name", "output", "pos",
            "principal", "principalpixel", "projection", "quat", "resolution", "sensorsize", "target", "user",
            "xyaxes", "zaxis",
        }),
    "light": frozenset({
            "active", "ambient", "attenuation", "bulbradius", "castshadow", "class", "cutoff", "diffuse", "dir",
            "directional", "exponent", "intensity", "mode", "name", "pos", "range", "softness", "specular", "target",
            "texture", "type",
        }),
    "plugin": frozenset({
            "instance", "plugin",
        }),
    "flexcomp": frozenset({
            "axisangle", "cellcount", "count", "dim", "dof", "element", "euler", "file", "flatskin", "group",
            "inertiabox", "mass", "material", "mesh", "name", "origin", "point", "pos", "quat", "radius", "rgba",
            "rigid", "scale", "spacing", "texcoord", "type", "xyaxes", "zaxis",
        }),
}
DEFAULT_CHILDREN: dict[str, frozenset[str]] = {
    "mesh": frozenset({
            "inertia", "maxhullvert", "scale",
        }),
    "texture": frozenset({
            "builtin", "colorspace", "embed", "gridlayout", "gridsize", "height", "hflip", "mark", "markrgb",
            "nchannel", "random", "rgb1", "rgb2", "type", "vflip", "width",
        }),
    "material": frozenset({
            "emission", "metallic", "reflectance", "rgba", "roughness", "shininess", "specular", "texrepeat",
            "texture", "texuniform",
        }),
    "joint": frozenset({
            "actuatorfrclimited", "actuatorfrcrange", "actuatorgravcomp", "armature", "axis", "damping",
            "frictionloss", "group", "limited", "margin", "pos", "range", "ref", "solimpfriction", "solimplimit",
            "solreffriction", "solreflimit", "springdamper", "springref", "springyield", "stiffness", "type", "user",
        }),
    "geom": frozenset({
            "adhesion", "axisangle", "castshadow", "conaffinity", "condim", "contype", "density", "euler",
            "fitscale", "fluidcoef", "fluidshape", "friction", "fromto", "gap", "group", "hfield", "margin", "mass",
            "material", "mesh", "pos", "priority", "quat", "rgba", "shellinertia", "size", "solimp", "solmix",
            "solref", "surfacevel", "type", "user", "xyaxes", "zaxis",
        }),
    "site": frozenset({
            "axisangle", "euler", "fromto", "group", "material", "mesh", "pos", "quat", "rgba", "size", "type",
            "user", "xyaxes", "zaxis",
        }),
    "camera": frozenset({
            "axisangle", "euler", "focal", "focalpixel", "fovy", "ipd", "mode", "output", "pos", "principal",
            "principalpixel", "projection", "quat", "resolution", "sensorsize", "user", "xyaxes", "zaxis",
        }),
    "light": frozenset({
            "active", "ambient", "attenuation", "bulbradius", "castshadow", "cutoff", "diffuse", "dir",
            "directional", "exponent", "intensity", "mode", "pos", "range", "softness", "specular", "type",
        }),
    "pair": frozenset({
            "adhesion", "condim", "friction", "gap", "margin", "solimp", "solref", "solreffriction",
        }),
    "equality": frozenset({
            "active", "solimp", "solref",
        }),
    "tendon": frozenset({
            "actuatorfrclimited", "actuatorfrcrange", "armature", "damping", "frictionloss", "group", "limited",
            "margin", "material", "range", "rgba", "solimpfriction", "solimplimit", "solreffriction", "solreflimit",
            "springlength", "springyield", "stiffness", "user", "width",
        }),
    "general": frozenset({
            "actdim", "actearly", "actlimited", "actrange", "armature", "biasprm", "biastype", "cranklength",
            "ctrllimited", "ctrlrange", "damping", "delay", "dynprm", "dyntype", "ffrange", "forcelimited",
            "forcerange", "gainprm", "gaintype", "gear", "group", "inheritrange", "input", "interp", "nsample",
            "user", "velrange",
        }),
    "motor": frozenset({
            "armature", "cranklength", "ctrllimited", "ctrlrange", "damping", "delay", "forcelimited", "forcerange",
            "gear", "group", "interp", "nsample", "user",
        }),
    "position": frozenset({
            "armature", "cranklength", "ctrllimited", "ctrlrange", "damping", "dampratio", "delay", "forcelimited",
            "forcerange", "gear", "group", "inheritrange", "interp", "kp", "kv", "nsample", "timeconst", "user",
        }),
    "velocity": frozenset({
            "armature", "cranklength", "ctrllimited", "ctrlrange", "damping", "delay", "forcelimited", "forcerange",
            "gear", "group", "interp", "kv", "nsample", "user",
        }),
    "intvelocity": frozenset({
            "actlimited", "actrange", "armature", "cranklength", "ctrllimited", "ctrlrange", "damping", "dampratio",
            "delay", "forcelimited", "forcerange", "gear", "group", "inheritrange", "interp", "kp", "kv", "nsample",
            "user",
        }),
    "orientation": frozenset({
            "ctrlrange", "dampratio", "delay", "forcelimited", "forcerange", "group", "input", "interp", "kp", "kv",
            "nsample", "user",
        }),
    "pid": frozenset({
            "armature", "cranklength", "ctrllimited", "ctrlrange", "damping", "dampratio", "delay", "ffrange",
            "forcelimited", "forcerange", "gear", "group", "imax", "inheritrange", "input", "interp", "ki", "kp",
            "kv", "nsample", "posrange", "slewmax", "user", "velrange",
        }),
    "damper": frozenset({
            "armature", "cranklength", "ctrlrange", "damping", "delay", "forcelimited", "forcerange", "gear",
            "group", "interp", "kv", "nsample", "user",
        }),
    "cylinder": frozenset({
            "area", "armature", "bias", "cranklength", "ctrllimited", "ctrlrange", "damping", "delay", "diameter",
            "forcelimited", "forcerange", "gear", "group", "interp", "nsample", "timeconst", "user",
        }),
    "muscle": frozenset({
            "armature", "cranklength", "ctrllimited", "ctrlrange", "damping", "delay", "force", "forcelimited",
            "forcerange", "fpmax", "fvmax", "gear", "group", "interp", "lmax", "lmin", "nsample", "range", "scale",
            "timeconst", "user", "vmax",
        }),
    "adhesion": frozenset({
            "ctrlrange", "delay", "forcelimited", "forcerange", "gain", "group", "interp", "nsample", "user",
        }),
    "dcmotor": frozenset({
            "armature", "cogging", "controller", "cranklength", "ctrllimited", "ctrlrange", "damping", "delay",
            "gear", "group", "inductance", "input", "interp", "lugre", "motorconst", "nominal", "nsample",
            "resistance", "saturation", "thermal", "user",
        }),
}
