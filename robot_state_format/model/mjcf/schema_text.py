"""MuJoCo 4.0.0's XML schema as ``mujoco.mj_printSchema(False, False)`` prints it (written by
conformance/mjcf_schema_generate.py; read by :mod:`.schema_check`)."""

SCHEMA = """\
mujoco (!)                    model
   compiler (*)               alignfree angle assetdir autolimits
                              balanceinertia boundinertia boundmass
                              conflict coordinate discardvisual
                              eulerseq fitaabb fusestatic inertiafromgeom
                              inertiagrouprange meshdir passthrough
                              savecanonical savecompiled saveinertial
                              settotalmass strippath texturedir
                              usethread
      lengthrange (?)         accel interval inttotal maxforce
                              mode timeconst timestep tolrange
                              useexisting uselimit
   option (*)                 actuatorgroupdisable ccd_iterations
                              ccd_tolerance cone density gravity
                              impratio integrator iterations
                              jacobian ls_iterations ls_tolerance
                              magnetic noslip_iterations noslip_tolerance
                              o_friction o_margin o_solimp o_solref
                              sdf_initpoints sdf_iterations sleep_tolerance
                              solver timestep tolerance viscosity
                              wind
      flag (?)                actuation autoreset clampctrl constraint
                              contact damper diagexact energy
                              equality eulerdamp filterparent
                              frictionloss fwdinv gravity invdiscrete
                              ipc island limit midphase multiccd
                              nativeccd override refsafe sensor
                              sleep speculative spring warmstart
   size (*)                   memory nconmax njmax nkey nstack
                              nuser_actuator nuser_body nuser_cam
                              nuser_geom nuser_jnt nuser_sensor
                              nuser_site nuser_tendon nuserdata
   statistic (*)              center extent meaninertia meanmass
                              meansize
   visual (*)
      global (?)              azimuth bvactive cameraid elevation
                              ellipsoidinertia fovy glow ipd
                              linewidth offheight offwidth orthographic
                              realtime
      quality (?)             numquads numslices numstacks offsamples
                              shadowsize
      headlight (?)           active ambient diffuse specular
      map (?)                 actuatortendon alpha fogend fogstart
                              force haze shadowclip shadowscale
                              stiffness stiffnessrot torque zfar
                              znear
      scale (?)               actuatorlength actuatorwidth camera
                              com connect constraint contactheight
                              contactwidth forcewidth framelength
                              framewidth frustum jointlength
                              jointwidth light selectpoint slidercrank
      rgba (?)                actuator actuatornegative actuatorpositive
                              bv bvactive camera com connect
                              constraint contactforce contactfriction
                              contactgap contactpoint contacttorque
                              crankbroken fog force frustum haze
                              inertia joint light rangefinder
                              selectpoint slidercrank
   default (R)                class
      mesh (?)                inertia maxhullvert scale
      texture (?)             builtin colorspace embed gridlayout
                              gridsize height hflip mark markrgb
                              nchannel random rgb1 rgb2 type
                              vflip width
      material (?)            emission metallic reflectance rgba
                              roughness shininess specular texrepeat
                              texture texuniform
         layer (*)            role texture
      joint (?)               actuatorfrclimited actuatorfrcrange
                              actuatorgravcomp armature axis
                              damping frictionloss group limited
                              margin pos range ref solimpfriction
                              solimplimit solreffriction solreflimit
                              springdamper springref springyield
                              stiffness type user
      geom (?)                adhesion axisangle castshadow conaffinity
                              condim contype density euler fitscale
                              fluidcoef fluidshape friction fromto
                              gap group hfield margin mass material
                              mesh pos priority quat rgba shellinertia
                              size solimp solmix solref surfacevel
                              type user xyaxes zaxis
      site (?)                axisangle euler fromto group material
                              mesh pos quat rgba size type user
                              xyaxes zaxis
      camera (?)              axisangle euler focal focalpixel
                              fovy ipd mode output pos principal
                              principalpixel projection quat
                              resolution sensorsize user xyaxes
                              zaxis
      light (?)               active ambient attenuation bulbradius
                              castshadow cutoff diffuse dir directional
                              exponent intensity mode pos range
                              softness specular type
      pair (?)                adhesion condim friction gap margin
                              solimp solref solreffriction
      equality (?)            active solimp solref
      tendon (?)              actuatorfrclimited actuatorfrcrange
                              armature damping frictionloss group
                              limited margin material range rgba
                              solimpfriction solimplimit solreffriction
                              solreflimit springlength springyield
                              stiffness user width
      general (?)             actdim actearly actlimited actrange
                              armature biasprm biastype cranklength
                              ctrllimited ctrlrange damping delay
                              dynprm dyntype ffrange forcelimited
                              forcerange gainprm gaintype gear
                              group inheritrange input interp
                              nsample user velrange
      motor (?)               armature cranklength ctrllimited
                              ctrlrange damping delay forcelimited
                              forcerange gear group interp nsample
                              user
      position (?)            armature cranklength ctrllimited
                              ctrlrange damping dampratio delay
                              forcelimited forcerange gear group
                              inheritrange interp kp kv nsample
                              timeconst user
      velocity (?)            armature cranklength ctrllimited
                              ctrlrange damping delay forcelimited
                              forcerange gear group interp kv
                              nsample user
      intvelocity (?)         actlimited actrange armature cranklength
                              ctrllimited ctrlrange damping dampratio
                              delay forcelimited forcerange gear
                              group inheritrange interp kp kv
                              nsample user
      orientation (?)         ctrlrange dampratio delay forcelimited
                              forcerange group input interp kp
                              kv nsample user
      pid (?)                 armature cranklength ctrllimited
                              ctrlrange damping dampratio delay
                              ffrange forcelimited forcerange
                              gear group imax inheritrange input
                              interp ki kp kv nsample posrange
                              slewmax user velrange
      damper (?)              armature cranklength ctrlrange
                              damping delay forcelimited forcerange
                              gear group interp kv nsample user
      cylinder (?)            area armature bias cranklength
                              ctrllimited ctrlrange damping delay
                              diameter forcelimited forcerange
                              gear group interp nsample timeconst
                              user
      muscle (?)              armature cranklength ctrllimited
                              ctrlrange damping delay force forcelimited
                              forcerange fpmax fvmax gear group
                              interp lmax lmin nsample range
                              scale timeconst user vmax
      adhesion (?)            ctrlrange delay forcelimited forcerange
                              gain group interp nsample user
      dcmotor (?)             armature cogging controller cranklength
                              ctrllimited ctrlrange damping delay
                              gear group inductance input interp
                              lugre motorconst nominal nsample
                              resistance saturation thermal user
   extension (*)
      plugin (*)              plugin
         instance (*)         name
            config (*)        key value
   asset (*)
      mesh (*)                builtin class content_type face
                              file inertia material maxhullvert
                              name normal params refpos refquat
                              scale smoothnormal texcoord vertex
         plugin (*)           instance plugin
            config (*)        key value
      hfield (*)              content_type elevation file name
                              ncol nrow size
      skin (*)                face file group inflate material
                              name rgba texcoord vertex
         bone (*)             bindpos bindquat body vertid vertweight
      texture (*)             builtin class colorspace content_type
                              embed file fileback filedown filefront
                              fileleft fileright fileup gridlayout
                              gridsize height hflip mark markrgb
                              name nchannel random rgb1 rgb2
                              type vflip width
      material (*)            class emission metallic name reflectance
                              rgba roughness shininess specular
                              texrepeat texture texuniform
         layer (*)            role texture
      model (*)               content_type file name
   (world)body (R)            axisangle childclass euler fuse
                              gravcomp mocap name pos quat simple
                              sleep user xyaxes zaxis
      inertial (?)            axisangle diaginertia euler fullinertia
                              mass pos quat xyaxes zaxis
      joint (*)               actuatorfrclimited actuatorfrcrange
                              actuatorgravcomp armature axis
                              class damping frictionloss group
                              limited margin name pos range ref
                              solimpfriction solimplimit solreffriction
                              solreflimit springdamper springref
                              springyield stiffness type user
      freejoint (*)           align group name
      geom (*)                adhesion axisangle castshadow class
                              conaffinity condim contype density
                              euler fitscale fluidcoef fluidshape
                              friction fromto gap group hfield
                              margin mass material mesh name
                              pos priority quat rgba shellinertia
                              size solimp solmix solref surfacevel
                              type user xyaxes zaxis
         plugin (*)           instance plugin
            config (*)        key value
      attach (*)              body frame model prefix
      site (*)                axisangle class euler fromto group
                              material mesh name pos quat rgba
                              size type user xyaxes zaxis
      camera (*)              axisangle class euler focal focalpixel
                              fovy ipd mode name output pos principal
                              principalpixel projection quat
                              resolution sensorsize target user
                              xyaxes zaxis
      light (*)               active ambient attenuation bulbradius
                              castshadow class cutoff diffuse
                              dir directional exponent intensity
                              mode name pos range softness specular
                              target texture type
      plugin (*)              instance plugin
         config (*)           key value
      flexcomp (*)            axisangle cellcount count dim dof
                              element euler file flatskin group
                              inertiabox mass material mesh name
                              origin point pos quat radius rgba
                              rigid scale spacing texcoord type
                              xyaxes zaxis
         edge (?)             damping equality solimp solref
                              stiffness
         elasticity (?)       damping elastic2d poisson section
                              sectionsize shear thickness yield
                              young
         contact (?)          activelayers conaffinity condim
                              contype friction gap margin passive
                              priority selfcollide solimp solmix
                              solref
         pin (*)              grid gridrange id range
         plugin (*)           instance plugin
            config (*)        key value
   deformable (*)
      flex (*)                body cellcount dim dof element
                              elemtexcoord flatskin group material
                              name node nodecoord radius rgba
                              texcoord vertex
         contact (?)          activelayers conaffinity condim
                              contype friction gap margin passive
                              priority selfcollide solimp solmix
                              solref
         edge (?)             damping stiffness
         elasticity (?)       damping elastic2d poisson section
                              sectionsize shear thickness yield
                              young
      skin (*)                face file group inflate material
                              name rgba texcoord vertex
         bone (*)             bindpos bindquat body vertid vertweight
   contact (*)
      pair (*)                adhesion class condim friction
                              gap geom1 geom2 margin name solimp
                              solref solreffriction
      exclude (*)             body1 body2 name
   tendon (*)
      spatial (*)             actuatorfrclimited actuatorfrcrange
                              armature class damping frictionloss
                              group limited margin material name
                              range rgba solimpfriction solimplimit
                              solreffriction solreflimit springlength
                              springyield stiffness user width
         site (*)             site
         geom (*)             geom sidesite
         pulley (*)           divisor
      fixed (*)               actuatorfrclimited actuatorfrcrange
                              armature class damping frictionloss
                              group limited margin name range
                              solimpfriction solimplimit solreffriction
                              solreflimit springlength springyield
                              stiffness user
         joint (*)            coef joint
   equality (*)
      connect (*)             active anchor body1 body2 class
                              name site1 site2 solimp solref
      weld (*)                active anchor body1 body2 class
                              name relpose site1 site2 solimp
                              solref torquescale
      joint (*)               active class joint1 joint2 name
                              polycoef solimp solref
      tendon (*)              active class name polycoef solimp
                              solref tendon1 tendon2
      flex (*)                active class flex name solimp solref
      flexstrain (*)          active cell class flex name solimp
                              solref
   actuator (*)
      general (*)             actdim actearly actlimited actrange
                              armature biasprm biastype body
                              class cranklength cranksite ctrllimited
                              ctrlrange damping delay dynprm
                              dyntype ffrange forcelimited forcerange
                              gainprm gaintype gear group inheritrange
                              input interp joint jointinparent
                              lengthrange name nsample refsite
                              site slidersite tendon user velrange
      motor (*)               armature class cranklength cranksite
                              ctrllimited ctrlrange damping delay
                              forcelimited forcerange gear group
                              interp joint jointinparent lengthrange
                              name nsample refsite site slidersite
                              tendon user
      position (*)            armature class cranklength cranksite
                              ctrllimited ctrlrange damping dampratio
                              delay forcelimited forcerange gear
                              group inheritrange interp joint
                              jointinparent kp kv lengthrange
                              name nsample refsite site slidersite
                              tendon timeconst user
      velocity (*)            armature class cranklength cranksite
                              ctrllimited ctrlrange damping delay
                              forcelimited forcerange gear group
                              interp joint jointinparent kv lengthrange
                              name nsample refsite site slidersite
                              tendon user
      intvelocity (*)         actlimited actrange armature class
                              cranklength cranksite ctrllimited
                              ctrlrange damping dampratio delay
                              forcelimited forcerange gear group
                              inheritrange interp joint jointinparent
                              kp kv lengthrange name nsample
                              refsite site slidersite tendon
                              user
      orientation (*)         class ctrlrange dampratio delay
                              forcelimited forcerange group input
                              interp joint kp kv name nsample
                              refsite site user
      pid (*)                 armature class cranklength cranksite
                              ctrllimited ctrlrange damping dampratio
                              delay ffrange forcelimited forcerange
                              gear group imax inheritrange input
                              interp joint jointinparent ki kp
                              kv lengthrange name nsample posrange
                              refsite site slewmax slidersite
                              tendon user velrange
      damper (*)              armature class cranklength cranksite
                              ctrlrange damping delay forcelimited
                              forcerange gear group interp joint
                              jointinparent kv lengthrange name
                              nsample refsite site slidersite
                              tendon user
      cylinder (*)            area armature bias class cranklength
                              cranksite ctrllimited ctrlrange
                              damping delay diameter forcelimited
                              forcerange gear group interp joint
                              jointinparent lengthrange name
                              nsample refsite site slidersite
                              tendon timeconst user
      muscle (*)              armature class cranklength cranksite
                              ctrllimited ctrlrange damping delay
                              force forcelimited forcerange fpmax
                              fvmax gear group interp joint jointinparent
                              lengthrange lmax lmin name nsample
                              range scale slidersite tausmooth
                              tendon timeconst user vmax
      adhesion (*)            body class ctrlrange delay forcelimited
                              forcerange gain group interp name
                              nsample user
      dcmotor (*)             armature class cogging controller
                              cranklength cranksite ctrllimited
                              ctrlrange damping delay gear group
                              inductance input interp joint jointinparent
                              lengthrange lugre motorconst name
                              nominal nsample refsite resistance
                              saturation site slidersite tendon
                              thermal user
      plugin (*)              actdim actearly actlimited actrange
                              armature class cranklength cranksite
                              ctrllimited ctrlrange damping delay
                              dynprm dyntype forcelimited forcerange
                              gear group instance interp joint
                              jointinparent lengthrange name
                              nsample plugin site slidersite
                              tendon user
         config (*)           key value
   sensor (*)
      touch (*)               cutoff delay interp interval name
                              noise nsample site user
      accelerometer (*)       cutoff delay interp interval name
                              noise nsample site user
      velocimeter (*)         cutoff delay interp interval name
                              noise nsample site user
      gyro (*)                cutoff delay interp interval name
                              noise nsample site user
      force (*)               cutoff delay interp interval name
                              noise nsample site user
      torque (*)              cutoff delay interp interval name
                              noise nsample site user
      magnetometer (*)        cutoff delay interp interval name
                              noise nsample site user
      camprojection (*)       camera cutoff delay interp interval
                              name noise nsample site user
      rangefinder (*)         camera cutoff data delay interp
                              interval name noise nsample site
                              user
      jointpos (*)            cutoff delay interp interval joint
                              name noise nsample user
      jointvel (*)            cutoff delay interp interval joint
                              name noise nsample user
      tendonpos (*)           cutoff delay interp interval name
                              noise nsample tendon user
      tendonvel (*)           cutoff delay interp interval name
                              noise nsample tendon user
      actuatorpos (*)         actuator cutoff delay interp interval
                              name noise nsample user
      actuatorvel (*)         actuator cutoff delay interp interval
                              name noise nsample user
      actuatorfrc (*)         actuator cutoff delay interp interval
                              name noise nsample user
      jointactuatorfrc (*)    cutoff delay interp interval joint
                              name noise nsample user
      tendonactuatorfrc (*)   cutoff delay interp interval name
                              noise nsample tendon user
      ballquat (*)            cutoff delay interp interval joint
                              name noise nsample user
      ballangvel (*)          cutoff delay interp interval joint
                              name noise nsample user
      jointlimitpos (*)       cutoff delay interp interval joint
                              name noise nsample user
      jointlimitvel (*)       cutoff delay interp interval joint
                              name noise nsample user
      jointlimitfrc (*)       cutoff delay interp interval joint
                              name noise nsample user
      tendonlimitpos (*)      cutoff delay interp interval name
                              noise nsample tendon user
      tendonlimitvel (*)      cutoff delay interp interval name
                              noise nsample tendon user
      tendonlimitfrc (*)      cutoff delay interp interval name
                              noise nsample tendon user
      framepos (*)            cutoff delay interp interval name
                              noise nsample objname objtype refname
                              reftype user
      framequat (*)           cutoff delay interp interval name
                              noise nsample objname objtype refname
                              reftype user
      framexaxis (*)          cutoff delay interp interval name
                              noise nsample objname objtype refname
                              reftype user
      frameyaxis (*)          cutoff delay interp interval name
                              noise nsample objname objtype refname
                              reftype user
      framezaxis (*)          cutoff delay interp interval name
                              noise nsample objname objtype refname
                              reftype user
      framelinvel (*)         cutoff delay interp interval name
                              noise nsample objname objtype refname
                              reftype user
      frameangvel (*)         cutoff delay interp interval name
                              noise nsample objname objtype refname
                              reftype user
      framelinacc (*)         cutoff delay interp interval name
                              noise nsample objname objtype user
      frameangacc (*)         cutoff delay interp interval name
                              noise nsample objname objtype user
      subtreecom (*)          body cutoff delay interp interval
                              name noise nsample user
      subtreelinvel (*)       body cutoff delay interp interval
                              name noise nsample user
      subtreeangmom (*)       body cutoff delay interp interval
                              name noise nsample user
      insidesite (*)          cutoff delay enclosed interp interval
                              name noise nsample objname objtype
                              site user
      distance (*)            body1 body2 cutoff delay geom1
                              geom2 interp interval name noise
                              nsample user
      normal (*)              body1 body2 cutoff delay geom1
                              geom2 interp interval name noise
                              nsample user
      fromto (*)              body1 body2 cutoff delay geom1
                              geom2 interp interval name noise
                              nsample user
      contact (*)             body1 body2 cutoff data delay geom1
                              geom2 interp interval name noise
                              nsample num reduce site subtree1
                              subtree2 user
      e_potential (*)         cutoff delay interp interval name
                              noise nsample user
      e_kinetic (*)           cutoff delay interp interval name
                              noise nsample user
      clock (*)               cutoff delay interp interval name
                              noise nsample user
      tactile (*)             cutoff delay geom interp interval
                              mesh name nsample user
      user (*)                cutoff datatype dim name needstage
                              noise objname objtype user
      plugin (*)              cutoff instance name objname objtype
                              plugin refname reftype user
         config (*)           key value
   custom (*)
      numeric (*)             data name size
      text (*)                data name
      tuple (*)               name
         element (*)          objname objtype prm
   keyframe (*)
      key (*)                 act ctrl mpos mquat name plastic
                              qpos qvel time
"""
